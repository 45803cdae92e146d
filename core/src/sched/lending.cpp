// Lending a blocked OS thread's kernel thread to a cluster
// (troupe::lend_while_blocked, docs/scheduler.md "Lending"): the OS thread,
// about to sleep in park(), runs the cluster's ready user threads as a
// guest processor until its own permit is banked or nothing is ready.
//
// A guest is an ordinary processor object that is never published: it is
// not in the cluster's slots (nobody steals from it or pushes to it but its
// own kernel thread) nor in its idle group (nobody wakes it). It finds work
// as an idle processor does (its own hand-off slot and queue, then the
// processors' queues, then their hand-offs after the grace). Threads woken
// by a thread it runs go to its hand-off slot and run next on it, so a
// producer that hands the blocked OS thread its element runs here, and the
// wake of the OS thread is a banked permit, not a futex wake. When it stops
// it closes its queue as a retiring processor does (processor::close_queue
// states the invariant), so no thread is stranded on it; a thread whose
// last processor is a guest is placed elsewhere (push refuses).
#include <cerrno>

#include "sched/runtime.hpp"

#if defined(TROUPE_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace troupe {
namespace detail {

namespace {
// The cluster this OS thread lends its kernel thread to, or nullptr.
[[gnu::tls_model("initial-exec")]] thread_local cluster_impl* tls_lend_to = nullptr;
}  // namespace

void processor::make_guest() noexcept {
    guest_ = true;
    retired_ = true;  // closed except while lending
}

processor* cluster_impl::acquire_guest() noexcept {
    for (std::size_t k = 0; k < max_guests; ++k) {
        // acquire: the previous user's writes to the guest (and its creation).
        if (guest_busy_[k].exchange(true, std::memory_order_acquire)) continue;
        if (!guests_[k]) {
            try {
                guests_[k] = std::make_unique<processor>(*this, max_processors + k, -1);
            } catch (...) {
                guest_busy_[k].store(false, std::memory_order_release);
                return nullptr;  // no memory: just do not lend
            }
            guests_[k]->make_guest();
        }
        return guests_[k].get();
    }
    return nullptr;
}

void cluster_impl::release_guest(processor* g) noexcept {
    const std::size_t k = g->index - max_processors;
    guest_busy_[k].store(false, std::memory_order_release);
}

void processor::lend(context& waiter) noexcept {
    const auto banked = [&waiter]() noexcept {
        return waiter.state_.load(std::memory_order_acquire) == context::permit;
    };
    set_current_processor(this);
#if defined(TROUPE_TSAN)
    tsan_self = __tsan_get_current_fiber();
#endif
    // The kernel thread differs from one lend to the next: look its
    // exception state and errno up again. run_fiber leaves both empty
    // between fibers, so the OS thread's own (it may block inside a
    // handler) is kept aside and restored.
    eh_ = current_eh_state();
    errno_ = &errno;
    const eh_state saved_eh = *eh_;
    const int saved_errno = errno;
    *eh_ = eh_state{};
    qlock_.lock();
    retired_ = false;
    qlock_.unlock();
    while (!banked()) {
        fiber* f = find_work(true);
        if (!f) break;
        run_fiber(f);
    }
    // Close, then hand what is left here to the cluster's processors (the
    // queue-retirement invariant: processor::close_queue, processor.cpp).
    close_queue();
    streak_ = 0;
    *eh_ = saved_eh;
    errno = saved_errno;
    set_current_processor(nullptr);
}

cluster_impl* lending_to() noexcept { return tls_lend_to; }

void lend_kernel_thread(context& self) noexcept {
    cluster_impl* c = tls_lend_to;
    if (!c || current_processor()) return;
    processor* g = c->acquire_guest();
    if (!g) return;
    g->lend(self);
    c->release_guest(g);
}

}  // namespace detail

lend_while_blocked::lend_while_blocked(cluster& c) noexcept : previous_(detail::tls_lend_to) {
    if (!detail::current_processor()) detail::tls_lend_to = &c.impl();
}

lend_while_blocked::~lend_while_blocked() {
    if (!detail::current_processor()) detail::tls_lend_to = previous_;
}

}  // namespace troupe
