// Lending a blocked OS thread's kernel thread to a cluster
// (troupe::lend_while_blocked, docs/scheduler.md "Lending"): the OS thread,
// about to sleep in park(), takes the slot of a processor whose own kernel
// thread sleeps and runs the cluster's ready user threads in that slot, as
// Go's M takes a P. So the cluster's work never runs on more kernel
// threads than it has processors: the processor's own thread stays asleep
// while its slot is lent.
//
// The slot's states live in the processor's idle-group word
// (idle_group::take, hold, resume, give_back, retake):
//   dormant --take--> lent          the lender runs the slot in park()
//   lent --hold--> held             its permit is banked: it returns to its
//                                   own code and keeps the slot (Go's main
//                                   goroutine keeps its P)
//   held --resume--> lent           its next wait runs the slot again
//   lent --give_back--> dormant     no work within its spin, its scope
//                                   ends, or the processor must retire
//   held --retake--> awake          retire/stop: the processor's own
//                                   thread is needed
// While lent or held the rule sees the processor as busy: work queued on
// the slot is run by the lender at its next wait, or stolen by other
// processors when they idle; give_back re-checks the slot's queue and wakes
// its own thread if work is left there.
#include <cerrno>

#include "sched/runtime.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/topology.hpp"

#if defined(TROUPE_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace troupe {
namespace detail {

namespace {
// The cluster this OS thread lends its kernel thread to, or nullptr.
[[gnu::tls_model("initial-exec")]] thread_local cluster_impl* tls_lend_to = nullptr;
// The slot this OS thread holds between its waits, or nullptr.
[[gnu::tls_model("initial-exec")]] thread_local processor* tls_held = nullptr;

// Spinning for work in a slot pays only where another CPU can make it.
bool lender_may_spin() noexcept {
    static const bool many = affinity_cpu_count() > 1;
    return many;
}
}  // namespace

processor* cluster_impl::take_slot() noexcept {
    // From the highest: the wake rule wakes sleepers from the lowest up, so
    // the two rarely reach for the same processor.
    for (std::size_t i = processor_count(); i-- > 0;) {
        processor* p = active_at(i);
        // take succeeds only on a dormant member: its thread sleeps past its
        // re-check and touches none of the processor's fields until the
        // slot is given back (or retaken) and a waker wakes it.
        if (p && idlers.take(p->idle_)) return p;
    }
    return nullptr;
}

bool processor::lend(context& waiter) noexcept {
    const auto banked = [&waiter]() noexcept {
        return waiter.state_.load(std::memory_order_acquire) == context::permit;
    };
    // The slot is run again: its sleeping thread's next look sees a change.
    lend_epoch_.fetch_add(1, std::memory_order_relaxed);
    // The fields a processor caches for its kernel thread are ours while
    // we run the slot (its own thread is asleep): keep its values aside.
    eh_state* const own_eh = eh_;
    int* const own_errno = errno_;
    void* const own_tsan = tsan_self;
    set_current_processor(this);
#if defined(TROUPE_TSAN)
    tsan_self = __tsan_get_current_fiber();
#endif
    // run_fiber leaves the kernel thread's exception state and errno empty
    // between fibers, so the OS thread's own (it may block inside a
    // handler) is kept aside and restored.
    eh_ = current_eh_state();
    errno_ = &errno;
    const eh_state saved_eh = *eh_;
    const int saved_errno = errno;
    *eh_ = eh_state{};
    const long spin = lender_may_spin() ? park_spin_limit() : 0;
    long left = spin;
    bool keep = false;
    for (;;) {
        // Retiring or stopping is the processor's own thread's work.
        if (retire_.load(std::memory_order_acquire) || stop_.load(std::memory_order_acquire)) break;
        if (banked()) {
            keep = true;
            break;
        }
        if (fiber* f = find_work(true)) {
            run_fiber(f);
            left = spin;
            continue;
        }
        // Nothing now: spin as an idle processor would (the OS thread's park
        // spin), since a wake of ours or new work is likely to come soon;
        // then give the slot back rather than sleep holding it.
        if (left-- <= 0) break;
        cpu_relax();
    }
    *eh_ = saved_eh;
    errno = saved_errno;
    eh_ = own_eh;
    errno_ = own_errno;
    tsan_self = own_tsan;
    set_current_processor(nullptr);
    if (!keep) {
        give_back();
        return false;
    }
    // Held: the fields above are restored before the word says so, so a
    // retake that wins finds the processor as its thread left it.
    owner.idlers.hold(idle_);
    // Threads left queued here now wait for our next wait: the processor's
    // own thread must look at them now and then (it retakes the slot if we
    // stay away for a whole look).
    if (owner.settings.held_look_ns > 0 && (qsize_.load(std::memory_order_seq_cst) != 0 ||
                                            runnext_.load(std::memory_order_seq_cst) != nullptr))
        owner.idlers.nudge(idle_);
    // The Dekker partner of request_retire/request_stop (flag, then word):
    // we stored `held`, now load the flags. Either the requester saw held
    // and retakes, or we see its flag and give the slot back (one of
    // resume and retake wins the word).
    if (leaving()) {
        release_hold();
        return false;
    }
    return true;
}

void processor::give_back() noexcept {
    owner.idlers.give_back(idle_);  // dormant again, counted a sleeper (seq_cst)
    // The re-check half, after the word store: work queued here while the
    // slot looked busy relied on it (a push's wake of this member failed,
    // and the rule may have seen no sleeper). A retire or stop requested
    // meanwhile found the slot lent and left the wake to us.
    if (leaving()) {
        owner.idlers.wake(idle_, idle_group::wake_as::plain);
        return;
    }
    if (qsize_.load(std::memory_order_seq_cst) != 0 ||
        runnext_.load(std::memory_order_seq_cst) != nullptr) {
        if (!owner.idlers.wake(idle_, idle_group::wake_as::spinner)) owner.idlers.wake_one();
    }
}

bool processor::resume_hold() noexcept { return owner.idlers.resume(idle_); }

void processor::release_hold() noexcept {
    // resume fails only if a retake won: the processor's thread has it.
    if (owner.idlers.resume(idle_)) give_back();
}

cluster_impl* lending_to() noexcept { return tls_lend_to; }
processor* held_slot() noexcept { return tls_held; }

void lend_kernel_thread(context& self) noexcept {
    cluster_impl* c = tls_lend_to;
    if (!c || current_processor()) return;
    processor* p = tls_held;
    tls_held = nullptr;
    if (p && &p->owner != c) {
        // A slot of another cluster (an outer scope's): never sleep holding
        // it, its work would wait for us.
        p->release_hold();
        p = nullptr;
    }
    if (p && !p->resume_hold()) p = nullptr;  // retaken
    if (!p) p = c->take_slot();
    if (!p) return;  // every processor is awake: wait as any OS thread
    if (p->lend(self)) tls_held = p;
}

}  // namespace detail

lend_while_blocked::lend_while_blocked(cluster& c) noexcept : previous_(detail::tls_lend_to) {
    if (!detail::current_processor()) detail::tls_lend_to = &c.impl();
}

lend_while_blocked::~lend_while_blocked() {
    if (detail::current_processor()) return;
    detail::tls_lend_to = previous_;
    // The held slot goes back unless an enclosing scope lends to its
    // cluster too.
    if (detail::processor* p = detail::tls_held; p && &p->owner != previous_) {
        detail::tls_held = nullptr;
        p->release_hold();
    }
}

}  // namespace troupe
