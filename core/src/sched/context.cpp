// park/unpark, the OS-thread park spin, and the making of a user thread (its
// start, join and the this_thread helpers are in thread_life.cpp; a
// processor's switches into and out of its user threads in
// processor_switch.cpp).
#include <boost/context/detail/fcontext.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "diag/registry.hpp"
#include "sched/runtime.hpp"
#include "troupe/config.hpp"
#include "troupe/defaults/core.hpp"
#include "troupe/detail/block_hook.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/idle_poll.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/detail/wait_word.hpp"
#include "troupe/error.hpp"
#include "troupe/knobs.hpp"
#include "troupe/topology.hpp"

namespace bctx = boost::context::detail;

namespace __cxxabiv1 {
struct __cxa_eh_globals;
extern "C" __cxa_eh_globals* __cxa_get_globals() noexcept;
}  // namespace __cxxabiv1

namespace troupe {
namespace detail {

// Declared in sched/runtime.hpp.
[[gnu::tls_model("initial-exec")]] constinit thread_local context* tls_running = nullptr;

namespace {
// initial-exec: a direct %fs-relative access instead of __tls_get_addr.
// constinit: constant-initialised, so no TLS guard and no __tls_get_addr on
// each access (this_context() sits on every lock and unlock path).
[[gnu::tls_model("initial-exec")]] constinit thread_local os_context tls_os_context;

struct block_hook {
    block_hook_fn fn = nullptr;
    void* arg = nullptr;
};
[[gnu::tls_model("initial-exec")]] thread_local block_hook tls_block_hook;
[[gnu::tls_model("initial-exec")]] thread_local block_hook tls_yield_hook;

bool multi_core() noexcept {
    // The affinity mask, not the machine: a process confined to one CPU
    // gains nothing by spinning while its waker cannot run.
    static const bool many = affinity_cpu_count() > 1;
    return many;
}

int initial_park_spins() noexcept {
    return static_cast<int>(
        knobs::get_or(knobs::park_spin, defaults::core::os_park_spins, 1 << 24));
}

// The process-wide policy (relaxed: a setting, read once per park).
std::atomic<int> park_max_spins{initial_park_spins()};
std::atomic<bool> park_adaptive{true};

// One CPU in the affinity mask (mpirun's default binding): an OS thread
// whose wake an idle poller awaits (troupe-remote: its own ask's reply)
// drives the progress itself, as a raw MPI receive does, rather than sleep
// and leave it to a thread that would then have to wake it on this same
// CPU. It yields the CPU after a poll that did work (that work may have
// woken the thread it is for, which needs this CPU). Bounded as the awaited
// spin below.
template <class Consume>
bool poll_on_one_cpu(Consume try_consume) noexcept {
    if (!poll_awaited()) return false;
    const auto until = std::chrono::steady_clock::now() + defaults::core::os_park_awaited_spin;
    for (unsigned i = 1;; ++i) {
        const bool did = poll_idle();
        if (try_consume()) return true;
        if (did) std::this_thread::yield();
        else cpu_relax();
        if (i % 16 == 0 && (std::chrono::steady_clock::now() >= until || !poll_awaited()))
            return false;
    }
}

// Polls the permit before an OS thread sleeps; true if it consumed one.
template <class Consume>
bool spin_for_permit(os_context& self, Consume try_consume) noexcept {
    const int max = park_max_spins.load(std::memory_order_relaxed);
    if (max <= 0) return false;
    if (!multi_core()) return poll_on_one_cpu(try_consume);
    int budget = max;
    bool probe = true;
    if (park_adaptive.load(std::memory_order_relaxed)) {
        probe = ++self.parks_since_probe >= self.probe_gap;
        if (probe) self.parks_since_probe = 0;
        else
            budget = std::clamp(2 * self.spin_estimate,
                                std::min(max, defaults::core::os_park_min_spins), max);
    }
    for (int i = 0; i < budget; ++i) {
        cpu_relax();
        // An idle poller (troupe/detail/idle_poll.hpp) may be what brings
        // our wake (troupe-remote: the reply to our own ask): receiving it
        // here saves a hand-off to another thread and back.
        poll_idle();
        if (try_consume()) {
            // Spinning paid: follow how long the wake took.
            self.spin_estimate = (3 * self.spin_estimate + i + 1) / 4;
            self.probe_gap = 16;
            return true;
        }
    }
    // An idle poller awaits a reply (troupe-remote: an ask is outstanding,
    // likely ours): keep polling past the adaptive budget, bounded by
    // os_park_awaited_spin, so that the reply is received here rather than
    // by another thread that must then wake us (a futex, and a wait for a
    // core on a busy machine). Does not teach the adaptive estimate: how
    // long a remote reply takes says nothing about local wakes.
    if (poll_awaited()) {
        const auto until = std::chrono::steady_clock::now() + defaults::core::os_park_awaited_spin;
        for (unsigned i = 1;; ++i) {
            cpu_relax();
            poll_idle();
            if (try_consume()) return true;
            // Every 64 polls: the clock, and whether a reply is still awaited.
            if (i % 64 == 0 && (std::chrono::steady_clock::now() >= until || !poll_awaited()))
                break;
        }
    }
    // It did not pay: spin less, probe less often.
    self.spin_estimate /= 2;
    if (probe) self.probe_gap = std::min(self.probe_gap * 2, 1024u);
    return false;
}
}  // namespace

void set_block_hook(block_hook_fn fn, void* arg) noexcept { tls_block_hook = {fn, arg}; }
void set_yield_hook(block_hook_fn fn, void* arg) noexcept { tls_yield_hook = {fn, arg}; }
void run_yield_hook() noexcept {
    if (const block_hook h = tls_yield_hook; h.fn) [[unlikely]]
        h.fn(h.arg);
}

void set_user_thread_hooks(const user_thread_hooks* hooks, void* arg) noexcept {
    fiber* f = static_cast<fiber*>(tls_running);
    if (!f) return;
    if (f->hooks && f->hooks->switched_out) f->hooks->switched_out(f->hooks_arg);
    f->hooks = hooks;
    f->hooks_arg = arg;
    if (hooks && hooks->switched_in) hooks->switched_in(arg);
}

// Both are noinline: a fiber may resume on another kernel thread, and the
// compiler must not reuse a thread-local address computed before a switch.
[[gnu::noinline]] context& current_os_context() noexcept { return tls_os_context; }

eh_state* current_eh_state() noexcept {
    return reinterpret_cast<eh_state*>(__cxxabiv1::__cxa_get_globals());
}

[[gnu::noinline]] fiber* current_fiber() noexcept {
    processor* p = current_processor();
    return p ? p->current : nullptr;
}

namespace {
// A new user thread's first code: runs its callable, keeps what it throws
// for join(), and switches out for the last time.
void fiber_main(bctx::transfer_t t) noexcept {
    auto* p = static_cast<processor*>(t.data);
    fiber* self = p->current;
    resume_on(self, t.fctx, p);
    if (self->invoke) {
        try {
            self->invoke(self->payload);
        } catch (...) {
            self->error = std::current_exception();
        }
    }
    processor::fiber_entry_finish(self);
}
}  // namespace

// unpark's OS-thread wake, recording the trace's wake (out of line: the
// untraced path stays one flag test). The address only, as a key: the
// context may be gone already.
[[gnu::noinline, gnu::cold]] void traced_futex_wake(std::atomic<std::uint32_t>* word) noexcept {
    const std::uint64_t t0 = trace::now();
    futex_wake(*word);
    trace::unpark(word, t0, trace::placed::os_thread);
}
}  // namespace detail

[[gnu::noinline]] context& this_context() noexcept {
    // Out of line (a fiber may resume on another kernel thread, so no
    // caller may keep a TLS address across a switch): one load.
    if (context* c = detail::tls_running) return *c;
    return detail::tls_os_context;
}

void park() noexcept {
    context& self = this_context();
    // Fast path: consume a banked permit (acquire: see what the waker wrote).
    std::uint32_t expected = context::permit;
    if (self.state_.compare_exchange_strong(expected, context::running, std::memory_order_acquire))
        return;
    if (self.is_user_thread()) {
        auto* f = static_cast<detail::fiber*>(&self);
        if (const detail::user_thread_hooks* h = f->hooks; h && h->about_to_park) [[unlikely]]
            h->about_to_park(f->hooks_arg);
        detail::processor::switch_out(f, detail::post_action::park);
        // Resumed: the unparker set us back to running (acquire: see what
        // it wrote; an acquire load, not a fence, which TSan does not model).
        (void)self.state_.load(std::memory_order_acquire);
        return;
    }
    // Lending (troupe::lend_while_blocked): run the cluster's ready user
    // threads here first; a wake meanwhile only banks a permit.
    detail::lend_kernel_thread(self);
    expected = context::permit;
    if (self.state_.compare_exchange_strong(expected, context::running, std::memory_order_acquire))
        return;
    // An OS thread polls its permit briefly before sleeping (adaptive, see
    // spin_for_permit): a wake that comes soon (a lock hand-off, a reply)
    // then costs no futex on either side.
    if (detail::spin_for_permit(static_cast<detail::os_context&>(self), [&self]() noexcept {
            std::uint32_t e = context::permit;
            return self.state_.load(std::memory_order_relaxed) == context::permit &&
                   self.state_.compare_exchange_strong(e, context::running,
                                                       std::memory_order_acquire);
        }))
        return;
    // About to sleep: let the runtime owning this kernel thread react (it
    // must not park; a wake it causes for us only banks a permit), and the
    // idle pollers know we stop polling.
    if (const detail::block_hook h = detail::tls_block_hook; h.fn) h.fn(h.arg);
    detail::idle_sleeping();
    const std::uint64_t trace_t0 = detail::trace::on() ? detail::trace::now() : 0;
    expected = context::running;
    if (!self.state_.compare_exchange_strong(expected, context::parked,
                                             std::memory_order_acq_rel)) {
        // A permit arrived between the two CASes: consume it. (The failed
        // acq_rel CAS read the permit with acquire: we see the waker's writes.)
        self.state_.store(context::running, std::memory_order_relaxed);
        return;
    }
    // A recorded wait (an OS thread blocked on a troupe primitive): the
    // watch thread may check whether everything is asleep now.
    if (self.wait_.seq.load(std::memory_order_relaxed) & 1) {
        detail::stamp_wait(self.wait_);  // a clock read is nothing beside the futex
        detail::note_idle_sleep();
    }
    while (self.state_.load(std::memory_order_acquire) == context::parked)
        detail::futex_wait(self.state_, context::parked);
    if (trace_t0) [[unlikely]]
        detail::trace::os_park(&self.state_, trace_t0);
}

void unpark(context& c) noexcept {
    // Read everything the wake needs before the CAS that hands it over:
    // once the state leaves `parked`, an OS thread may return from park(),
    // exit and free its context. A fiber cannot run again until we
    // schedule it, so its descriptor stays valid after the CAS; for
    // an OS thread only the futex word's address is used afterwards, by the
    // wake system call, which never dereferences it in user space: if the
    // thread has exited, the call finds no waiter (or wakes a waiter on a
    // reused address spuriously, which every futex waiter in troupe
    // tolerates: each re-checks its word in a loop).
    const bool user = c.is_user_thread();
    auto* word = reinterpret_cast<std::atomic<std::uint32_t>*>(&c.state_);
    std::uint32_t s = c.state_.load(std::memory_order_relaxed);
    for (;;) {
        if (s == context::running) {
            // Bank a permit; release publishes what we did before waking.
            if (c.state_.compare_exchange_weak(s, context::permit, std::memory_order_release,
                                               std::memory_order_relaxed))
                return;
        } else if (s == context::permit) {
            if constexpr (checked_build)
                detail::report_misuse(detail::describe("context", nullptr, &c) +
                                      ": unparked twice without a park in between");
            return;
        } else {
            // Parked: we own the wake. acq_rel: release our writes to the
            // woken context; it cannot run again until we reschedule it.
            if (c.state_.compare_exchange_weak(s, context::running, std::memory_order_acq_rel,
                                               std::memory_order_relaxed)) {
                if (user) {
                    auto* f = static_cast<detail::fiber*>(&c);
                    f->home->make_ready(f);
                } else if (detail::trace::on()) [[unlikely]] {
                    detail::traced_futex_wake(word);
                } else {
                    detail::futex_wake(*word);
                }
                return;
            }
        }
    }
}

namespace detail {
int park_spin_limit() noexcept { return park_max_spins.load(std::memory_order_relaxed); }
}  // namespace detail

void set_park_spin_policy(park_spin_policy p) noexcept {
    detail::park_max_spins.store(std::max(p.max_spins, 0), std::memory_order_relaxed);
    detail::park_adaptive.store(p.adaptive, std::memory_order_relaxed);
}

park_spin_policy get_park_spin_policy() noexcept {
    return {detail::park_max_spins.load(std::memory_order_relaxed),
            detail::park_adaptive.load(std::memory_order_relaxed)};
}

namespace detail {

context& fiber_context(fiber* f) noexcept { return *f; }

void fiber_set_name(fiber* f, const char* name) noexcept {
    context_access::name(*f).store(name, std::memory_order_relaxed);
    if (trace::on()) [[unlikely]]
        trace::rename(f, name);
}

fiber* fiber_create(const thread_attributes& attrs, std::size_t size, std::size_t align,
                    void** payload) {
    const std::size_t usable = attrs.stack_size ? attrs.stack_size : defaults::core::stack_size;
    stack_mapping s = stack_allocate(usable);
    char* top = s.base + s.size;
    // Descriptor at the top of the stack, the callable just below it.
    char* desc = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(top) - sizeof(fiber)) &
                                         ~std::uintptr_t(alignof(fiber) - 1));
    auto* f = ::new (desc) fiber();
    char* pay = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(desc) - size) &
                                        ~std::uintptr_t(align - 1));
    char* sp = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(pay) & ~std::uintptr_t(63));
    f->stack = s;
    f->stack_low = s.base + page_size();
    f->stack_usable = static_cast<std::size_t>(s.base + s.size - f->stack_low);
    f->payload = pay;
    f->name = attrs.name;
    cluster& c = attrs.on ? *attrs.on : this_cluster();
    f->home = &c.impl();
    f->fctx = bctx::make_fcontext(sp, static_cast<std::size_t>(sp - f->stack_low), &fiber_main);
    *payload = pay;
    return f;
}

}  // namespace detail
}  // namespace troupe
