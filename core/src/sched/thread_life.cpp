// The user-thread life cycle after creation: start, join (and the release
// of a finished thread's stack), and the this_thread helpers (yield, sleep).
// Creation and the switches themselves are in context.cpp.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <system_error>
#include <thread>

#include "diag/registry.hpp"
#include "sched/runtime.hpp"
#include "troupe/config.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/detail/wait_word.hpp"
#include "troupe/error.hpp"
#include "troupe/stop_token.hpp"

#if defined(TROUPE_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace troupe {
namespace detail {

void fiber_start(fiber* f, void (*invoke)(void*)) {
    f->invoke = invoke;
#if defined(TROUPE_TSAN)
    f->tsan_fiber = __tsan_create_fiber(0);
#endif
    f->home->thread_started();
    register_fiber(*f);
    if (trace::on()) [[unlikely]]
        trace::spawn(f, f->name);
#if defined(TROUPE_STATISTICS)
    if (processor* p = current_processor(); p && &p->owner == f->home)
        p->counters.created.fetch_add(1, std::memory_order_relaxed);
    else
        f->home->created_outside.fetch_add(
            1, std::memory_order_relaxed);  // an OS thread or another cluster
#endif
    f->home->schedule_new(f);
}

namespace {
// A joiner's edge in the wait-for graph: the joined thread.
const context* joined_thread(const void* f) noexcept { return static_cast<const fiber*>(f); }
const wait_describer join_wait_info{nullptr, &joined_thread, "of"};

// Frees a finished fiber (its joiner slot says done); returns its exception.
std::exception_ptr release_finished(fiber* f) noexcept {
    // The finisher may still be inside its wake of a joiner it announced
    // with f (finish_join): its guard ends before ours can free f.
    wait_out_wakers(*f);
    unregister_fiber(*f);
    std::exception_ptr e = std::move(f->error);
    stack_mapping s = f->stack;
    f->~fiber();
    stack_release(s);
    return e;
}

std::exception_ptr wait_and_release(fiber* f) noexcept {
    context& me = this_context();
    context* expected = nullptr;
    // Register as the joiner; if the fiber already finished the CAS fails
    // with done_marker and there is nobody to wait for.
    // Then park until the finishing side's exchange says done: a stray
    // unpark must not free a fiber that is still running (acquire: pairs
    // with that exchange, so the fiber's last writes are visible).
    if (f->joiner.compare_exchange_strong(expected, &me, std::memory_order_acq_rel))
        park_until([f] { return f->joiner.load(std::memory_order_acquire) == done_marker; },
                   "thread join", nullptr, f, &join_wait_info);
    return release_finished(f);
}

}  // namespace

std::exception_ptr fiber_join_or_stop(fiber* f, const stop_token& tok) {
    if (f == current_fiber()) [[unlikely]]
        throw_join_error(true);
    if (tok.stop_requested()) throw_cancelled("thread join", f->name, f);
    // The join and the stop race for one exclusive status word; the
    // finishing side wins our join node (wake_joiner) before it wakes us.
    std::atomic<std::uintptr_t> status{std::uintptr_t(select_status::unsat)};
    context& me = this_context();
    select_node join_node{me, status}, stop_node{me, status};
    context* const tagged =
        reinterpret_cast<context*>(reinterpret_cast<std::uintptr_t>(&join_node) | joiner_node_tag);
    context* expected = nullptr;
    if (!f->joiner.compare_exchange_strong(expected, tagged, std::memory_order_acq_rel))
        return release_finished(f);  // finished already (done_marker, acquired)
    if (!tok.register_select(stop_node)) {
        wait_scope rec("thread join", nullptr, f, &join_wait_info);
        for (;;) {
            trace::note_park("thread join");
            park();
            const std::uintptr_t st = status.load(std::memory_order_acquire);
            if (st > std::uintptr_t(select_status::run) &&
                reinterpret_cast<const select_node*>(st)->released())
                break;
            if constexpr (checked_build) report_stray_wake("thread join", f->name, f);
        }
    }
    tok.unregister_select(stop_node);
    if (status.load(std::memory_order_acquire) == reinterpret_cast<std::uintptr_t>(&join_node))
        return release_finished(f);  // the finisher won: done_marker is in the slot
    // The stop won: take the join node back. If the thread finished
    // meanwhile, its finisher lost the node and grants it as its last
    // touch: wait for that (a few instructions) before the node goes.
    expected = tagged;
    if (!f->joiner.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) {
        queue_backoff b;
        while (!join_node.released()) b.pause();
    }
    throw_cancelled("thread join", f->name, f);  // still joinable
}

void throw_join_error(bool self) {
    if (self)
        throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur),
                                "troupe::thread::join: a thread cannot join itself");
    throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                            "troupe::thread::join: the handle is not joinable (joined already, "
                            "moved from, or empty)");
}

void fiber_join(fiber*& slot) {
    fiber* f = slot;
    // It would wait for itself for ever (a one-thread cycle, which the
    // deadlock walk does not report: see confirm_cycle).
    if (f == current_fiber()) [[unlikely]]
        throw_join_error(true);
    slot = nullptr;
    if (auto e = wait_and_release(f)) std::rethrow_exception(e);
}

void fiber_join_noexcept(fiber* f) noexcept {
    const char* name = f->name;
    const void* addr = f;
    if (auto e = wait_and_release(f)) {
        std::string what = "unknown exception";
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            what = x.what();
        } catch (...) {}
        std::fprintf(stderr, "troupe: %s ended with an uncaught exception: %s\n",
                     describe("thread", name, addr).c_str(), what.c_str());
    }
}

void yield_now() noexcept {
    if (fiber* f = current_fiber()) processor::switch_out(f, post_action::yield);
    else std::this_thread::yield();
}

}  // namespace detail

namespace this_thread {

void yield() noexcept {
    // The runtime owning this thread hears of the yield first (its yield
    // hook, troupe/detail/block_hook.hpp).
    if (detail::fiber* f = detail::current_fiber()) {
        if (const detail::user_thread_hooks* h = f->hooks; h && h->about_to_yield) [[unlikely]]
            h->about_to_yield(f->hooks_arg);
    } else {
        detail::run_yield_hook();
    }
    detail::yield_now();
}

void sleep_until(std::chrono::steady_clock::time_point deadline) noexcept {
    if (deadline <= std::chrono::steady_clock::now()) return;
    struct sleeper {
        context* who;
        std::atomic<bool> fired{false};
    } s{&this_context()};
    detail::timer_node t;
    t.deadline = deadline;
    t.arg = &s;
    t.fire = [](detail::timer_node& n) noexcept {
        auto* sl = static_cast<sleeper*>(n.arg);
        context* who = sl->who;  // read before the store that lets the sleeper go
        sl->fired.store(true, std::memory_order_release);
        unpark(*who);
    };
    try {
        detail::timer_arm(t);
    } catch (...) {
        // No timer (allocation failure): still never return early, by
        // yielding until the deadline. Rare, and keeps sleep nothrow.
        while (std::chrono::steady_clock::now() < deadline) yield();
        return;
    }
    // The timer is the only legitimate waker: a stray unpark parks again.
    detail::park_until(
        [&] { return s.fired.load(std::memory_order_acquire); }, "sleep", nullptr, &t, nullptr,
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count());
    // The callback may still be between its store and its return: wait it
    // out before `t` and `s` leave scope (returns false, it already fired).
    detail::timer_cancel(t);
}

void sleep_for(std::chrono::nanoseconds d) noexcept {
    if (d <= std::chrono::nanoseconds::zero()) return;
    sleep_until(std::chrono::steady_clock::now() + d);
}

bool in_user_thread() noexcept { return detail::current_fiber() != nullptr; }

std::size_t processor_index() noexcept {
    detail::processor* p = detail::current_fiber() ? detail::current_processor() : nullptr;
    return p ? p->index : not_on_processor;
}

}  // namespace this_thread
}  // namespace troupe
