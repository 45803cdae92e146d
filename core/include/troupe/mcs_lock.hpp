#pragma once
/// An MCS queue spin lock: FIFO, each waiter spins on its own cache line.
///
///     troupe::mcs_lock l;
///     { std::lock_guard g{l}; ++shared; }
///
/// This is the node-free (K42) variant: waiters' queue nodes live on their
/// stacks only while they wait, so `lock()`/`unlock()` need no argument and
/// the lock meets the plain lockable concept. Spins (never parks): keep
/// critical sections short and never block inside one.
#include <atomic>

#include "troupe/detail/futex.hpp"

namespace troupe {

class mcs_lock {
public:
    constexpr mcs_lock() noexcept = default;
    mcs_lock(const mcs_lock&) = delete;
    mcs_lock& operator=(const mcs_lock&) = delete;

    /// Spins until the caller owns the lock; FIFO among contenders.
    void lock() noexcept;
    /// Takes the lock only if nobody holds or waits for it.
    bool try_lock() noexcept {
        qnode* expected = nullptr;
        return tail_.compare_exchange_strong(expected, &self_, std::memory_order_acquire);
    }
    /// Passes the lock to the next waiter, or frees it.
    void unlock() noexcept;

private:
    struct qnode {
        std::atomic<qnode*> next{nullptr};
        std::atomic<bool> waiting{false};
    };
    // tail_ == nullptr: free; == &self_: held, no waiters; else: last waiter.
    std::atomic<qnode*> tail_{nullptr};
    // self_.next: the first waiter, written by it (or moved here by the
    // owner that got the lock from the queue).
    qnode self_;
};

}  // namespace troupe
