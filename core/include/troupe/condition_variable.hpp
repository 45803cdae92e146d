#pragma once
/// A condition variable usable with any lock: troupe's blocking locks (with
/// wait morphing), spin locks, `std::mutex`, anything with lock()/unlock().
///
///     troupe::blocking_lock l;  troupe::condition_variable cv;  bool ready = false;
///     { std::lock_guard g{l}; cv.wait(l, [&] { return ready; }); }     // consumer
///     { std::lock_guard g{l}; ready = true; } cv.notify_one();          // producer
///
/// Waiters are woken in FIFO order. With `blocking_lock`/`owner_lock` a
/// notify moves the waiter straight onto the lock's queue (or grants it the
/// lock), so the woken thread never contends for the lock again and its
/// recursion depth is restored. Timed waits return false on timeout; the
/// timer is armed only after the waiter is queued, and a timeout and a notify
/// never both take effect (one CAS decides).
#include <chrono>
#include <concepts>
#include <utility>

#include "troupe/blocking_lock.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/select.hpp"
#include "troupe/spinlock.hpp"

namespace troupe {

class condition_variable {
public:
    condition_variable() noexcept = default;
    condition_variable(const condition_variable&) = delete;
    condition_variable& operator=(const condition_variable&) = delete;
    /// Checked builds report destruction with waiters.
    ~condition_variable();

    /// Releases `l`, parks until notified, and returns holding `l` again.
    template <class Lock>
    void wait(Lock& l) {
        wait_impl(l, nullptr);
    }
    /// Waits until `pred()` holds (checked with `l` held).
    template <class Lock, std::predicate Pred>
    void wait(Lock& l, Pred pred) {
        while (!pred()) wait(l);
    }
    /// As wait, but gives up at `deadline`: returns false on timeout.
    template <class Lock>
    bool wait_until(Lock& l, std::chrono::steady_clock::time_point deadline) {
        return wait_impl(l, &deadline);
    }
    template <class Lock>
    bool wait_for(Lock& l, std::chrono::nanoseconds d) {
        return wait_until(l, std::chrono::steady_clock::now() + d);
    }
    /// Waits until `pred()` holds or the deadline passes; returns pred().
    template <class Lock, std::predicate Pred>
    bool wait_until(Lock& l, std::chrono::steady_clock::time_point deadline, Pred pred) {
        while (!pred())
            if (!wait_until(l, deadline)) return pred();
        return true;
    }
    template <class Lock, std::predicate Pred>
    bool wait_for(Lock& l, std::chrono::nanoseconds d, Pred pred) {
        return wait_until(l, std::chrono::steady_clock::now() + d, std::move(pred));
    }

    /// Wakes the longest waiter; returns whether there was one.
    bool notify_one() noexcept;
    /// Wakes every waiter; returns whether there was any.
    bool notify_all() noexcept;
    /// Whether nobody waits (a snapshot).
    bool empty() const noexcept;

private:
    struct waiter {
        explicit waiter(context& me) noexcept : node(me, status), lock_node(me) { node.extra = this; }
        std::atomic<std::uintptr_t> status{0};
        bool timed_out = false;  // written by the timer after it won the claim
        select_node node;       // in our queue; exclusive: notify vs timeout
        select_node lock_node;  // plain; queued on a morphing lock by notify
        detail::blocking_lock_base* morph = nullptr;
        detail::timer_node timer;
    };

    void enqueue(waiter& w) noexcept;
    // After a wake: true if notified; false if the timer won (then we also
    // dequeue ourselves).
    bool finish(waiter& w, bool timed) noexcept;
    static void wake(waiter& w) noexcept;

    template <class Lock>
    bool wait_impl(Lock& l, const std::chrono::steady_clock::time_point* deadline) {
        waiter w{this_context()};
        std::size_t depth = 0;
        constexpr bool morphing = std::derived_from<Lock, detail::blocking_lock_base>;
        if constexpr (morphing) {
            depth = l.cv_depth();
            w.lock_node.extra = reinterpret_cast<void*>(depth);
            w.morph = &l;
        }
        enqueue(w);  // before releasing: a notify after our unlock finds us
        if constexpr (morphing) l.cv_release(); else l.unlock();
        if (deadline) {
            w.timer.deadline = *deadline;
            w.timer.arg = &w;
            w.timer.fire = [](detail::timer_node& t) noexcept {
                auto& me = *static_cast<waiter*>(t.arg);
                if (me.node.try_claim()) {
                    me.timed_out = true;  // published by the unpark in wake()
                    me.node.wake();
                }
            };
            detail::timer_arm(w.timer);
        }
        park();
        const bool notified = finish(w, deadline != nullptr);
        if constexpr (morphing) {
            if (!notified) l.cv_reacquire(depth);  // a notify hands us the lock
        } else {
            l.lock();
        }
        return notified;
    }

    mutable spinlock guard_{"condition_variable"};
    node_queue waiting_;
};

}  // namespace troupe
