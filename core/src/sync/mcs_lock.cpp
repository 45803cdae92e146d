// mcs_lock: the K42 node-free MCS queue lock.
#include "troupe/mcs_lock.hpp"

#include "troupe/defaults/core.hpp"
#include "troupe/thread.hpp"

namespace troupe {

namespace {
// Spin a little, then yield: FIFO hand-off to a waiter whose kernel thread
// is descheduled (more spinners than cores) would otherwise stall every
// hand-off for a whole time slice. A user thread yields to its processor,
// so a holder that yielded on the same processor can run.
struct backoff {
    int spins = 0;
    void pause() noexcept {
        if (++spins < defaults::core::spinlock_spins) detail::cpu_relax();
        else detail::yield_now();
    }
};
}  // namespace

void mcs_lock::lock() noexcept {
    for (;;) {
        qnode* prev = tail_.load(std::memory_order_relaxed);
        if (prev == nullptr) {
            // Free: become the holder with no queue (tail = &self_).
            if (tail_.compare_exchange_weak(prev, &self_, std::memory_order_acquire,
                                            std::memory_order_relaxed))
                return;
            continue;
        }
        qnode me;
        me.waiting.store(true, std::memory_order_relaxed);
        // Swing the tail to our stack node; the acq_rel orders our node's
        // initialisation before the predecessor can see it.
        if (!tail_.compare_exchange_weak(prev, &me, std::memory_order_acq_rel,
                                         std::memory_order_relaxed))
            continue;
        // Link behind the predecessor (self_ if the holder had no queue).
        prev->next.store(&me, std::memory_order_release);
        backoff b;
        while (me.waiting.load(std::memory_order_acquire)) b.pause();
        // We own the lock. Move our successor link into self_, since `me`
        // dies when we return. If no successor yet, try to make self_ the
        // tail again; if that fails a successor is linking to `me`: wait.
        qnode* succ = me.next.load(std::memory_order_acquire);
        if (succ == nullptr) {
            self_.next.store(nullptr, std::memory_order_relaxed);
            qnode* expected = &me;
            if (tail_.compare_exchange_strong(expected, &self_, std::memory_order_acq_rel)) return;
            while ((succ = me.next.load(std::memory_order_acquire)) == nullptr) b.pause();
        }
        self_.next.store(succ, std::memory_order_relaxed);
        return;
    }
}

void mcs_lock::unlock() noexcept {
    qnode* succ = self_.next.load(std::memory_order_acquire);
    if (succ == nullptr) {
        qnode* expected = &self_;
        // No queue: free the lock (release our critical section).
        if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_release)) return;
        // Someone swung the tail but has not linked yet.
        backoff b;
        while ((succ = self_.next.load(std::memory_order_acquire)) == nullptr) b.pause();
    }
    self_.next.store(nullptr, std::memory_order_relaxed);
    // Hand over: release pairs with the waiter's acquire spin.
    succ->waiting.store(false, std::memory_order_release);
}

}  // namespace troupe
