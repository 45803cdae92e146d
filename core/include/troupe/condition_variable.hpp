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
/// recursion depth is restored. Timed waits return false on timeout; a
/// timeout and a notify never both take effect (one CAS decides).
///
/// Cost: a waiters flag and the queue lock share one atomic word; a notify
/// with nobody waiting is one load. Stray wakes (an unpark from elsewhere)
/// never end a wait early (checked builds report them).
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <utility>

#include "troupe/blocking_lock.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/detail/wait_word.hpp"
#include "troupe/select.hpp"

namespace troupe {

class condition_variable {
public:
    condition_variable() noexcept = default;
    condition_variable(const condition_variable&) = delete;
    condition_variable& operator=(const condition_variable&) = delete;
    /// Checked builds report destruction with waiters.
    ~condition_variable();

    /// Releases `l`, parks until notified, and returns holding `l` again.
    /// `l` must be held by the caller; its unlock() must not throw. Throws
    /// only what `l.lock()` throws when re-acquiring (never for troupe's
    /// blocking locks, which are handed back by the notifier).
    template <class Lock>
    void wait(Lock& l) {
        wait_impl(l, nullptr);
    }
    /// Waits until `pred()` holds (checked with `l` held). An exception from
    /// `pred` propagates with `l` held and nothing queued.
    template <class Lock, std::predicate Pred>
    void wait(Lock& l, Pred pred) {
        while (!pred()) wait(l);
    }
    /// As wait, but gives up at `deadline`: returns false on timeout, true
    /// if notified (exactly one of the two takes effect). Arming the timer
    /// may allocate: std::bad_alloc then propagates with `l` still held and
    /// nothing queued (strong guarantee).
    template <class Lock>
    bool wait_until(Lock& l, std::chrono::steady_clock::time_point deadline) {
        return wait_impl(l, &deadline);
    }
    /// wait_until(l, now + d).
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
    /// wait_until(l, now + d, pred).
    template <class Lock, std::predicate Pred>
    bool wait_for(Lock& l, std::chrono::nanoseconds d, Pred pred) {
        return wait_until(l, std::chrono::steady_clock::now() + d, std::move(pred));
    }

    /// Wakes the longest waiter; returns whether there was one. With nobody
    /// waiting it is one load and takes no lock. nothrow.
    bool notify_one() noexcept {
        // A waiter queues (setting W) before releasing the user's lock, so a
        // notifier ordered after that release by the lock sees W.
        if (!(word_.load(std::memory_order_acquire) & detail::waiters_bit)) return false;
        return notify_one_slow();
    }
    /// Wakes every waiter; returns whether there was any. As notify_one
    /// with nobody waiting. nothrow.
    bool notify_all() noexcept {
        if (!(word_.load(std::memory_order_acquire) & detail::waiters_bit)) return false;
        return notify_all_slow();
    }
    /// Whether nobody waits (a snapshot). Lock-free.
    bool empty() const noexcept {
        return !(word_.load(std::memory_order_acquire) & detail::waiters_bit);
    }

private:
    enum class outcome : int { pending, notified, timed_out };
    // Attached to `node` (our queue holds only waiters' nodes).
    struct waiter : wait_record {
        explicit waiter(context& me) noexcept : node(me, status), lock_node(me) {
            node.attach(*this);
        }
        std::atomic<std::uintptr_t> status{0};
        // Set by the winner of `node` (a non-morphing notifier or the timer)
        // after its last touch of this waiter but the timer node.
        std::atomic<outcome> result{outcome::pending};
        select_node node;       // in our queue; exclusive: notify vs timeout
        select_node lock_node;  // plain; queued on a morphing lock by notify
        detail::blocking_lock_base* morph = nullptr;
        detail::timer_node timer;
    };

    void enqueue(waiter& w) noexcept;
    bool notify_one_slow() noexcept;
    bool notify_all_slow() noexcept;
    // After the wait completed: true if notified; false if the timer won
    // (then we also dequeue ourselves).
    bool finish(waiter& w, bool timed) noexcept;
    static void wake(waiter& w) noexcept;
    static void on_timeout(detail::timer_node& t) noexcept;

    template <class Lock>
    bool wait_impl(Lock& l, const std::chrono::steady_clock::time_point* deadline) {
        context& me = this_context();
        waiter w{me};
        std::size_t depth = 0;
        constexpr bool morphing = std::derived_from<Lock, detail::blocking_lock_base>;
        if constexpr (morphing) {
            depth = l.cv_depth();
            w.morph = &l;
        }
        if (deadline) {
            // Armed first, while nothing is queued or released: arming may
            // throw (it may allocate), and then the wait has had no effect.
            // A timer firing before we queue claims the node; we then queue
            // a lost node (notifiers drop it), park returns at once, and
            // finish() dequeues it.
            w.timer.deadline = *deadline;
            w.timer.arg = &w;
            w.timer.fire = &on_timeout;
            detail::timer_arm(w.timer);
        }
        enqueue(w);  // before releasing: a notify after our unlock finds us
        if constexpr (morphing) l.cv_release();
        else l.unlock();
        // Done when notified (a morphing lock names us as its owner: the
        // notifier queued us there, or granted it) or timed out. Anything
        // else waking us is a stray wake: wait again.
        detail::park_until(
            [&] {
                if constexpr (morphing)
                    if (l.cv_granted(me)) return true;
                return w.result.load(std::memory_order_acquire) != outcome::pending;
            },
            "condition_variable", nullptr, this, nullptr,
            deadline
                ? std::chrono::duration_cast<std::chrono::nanoseconds>(deadline->time_since_epoch())
                      .count()
                : 0);
        const bool notified = finish(w, deadline != nullptr);
        if constexpr (morphing) {
            // A notify handed us the lock with one level; else take it again.
            if (notified) l.cv_restore_depth(depth);
            else l.cv_reacquire(depth);
        } else {
            l.lock();
        }
        return notified;
    }

    // W | L (docs/locks.md): W iff a waiter is queued.
    mutable std::atomic<std::uintptr_t> word_{0};
    node_queue waiting_;  // under L
};

}  // namespace troupe
