#pragma once
/// A test-and-test-and-set spin lock for short critical sections.
///
///     troupe::spinlock l;
///     { std::lock_guard g{l}; ++counter; }
///
/// Never parks: after a short spin it yields (as `troupe::this_thread::yield`
/// without the runtime's yield hook: a user thread lets its processor run
/// other user threads, which may include the holder, and may resume on
/// another kernel thread; an OS thread yields the CPU). So a user thread
/// must not keep kernel-thread-local state (a thread_local buffer, say)
/// across `lock()`. Not fair, not recursive.
/// Use it where the holder never blocks inside the section.
#include <atomic>

#include "troupe/config.hpp"
#include "troupe/defaults/core.hpp"
#include "troupe/detail/futex.hpp"

namespace troupe {

class spinlock {
public:
    constexpr spinlock() noexcept = default;
    explicit spinlock(const char* name) noexcept : name_(name) {}
    spinlock(const spinlock&) = delete;
    spinlock& operator=(const spinlock&) = delete;
    ~spinlock() = default;

    /// Spins (then yields, see above) until the lock is free.
    void lock() noexcept {
        // Fast path: one exchange. acquire pairs with unlock's release.
        if (!flag_.exchange(true, std::memory_order_acquire)) [[likely]] {
            note_acquired();
            return;
        }
        lock_slow();
    }
    /// Takes the lock if it is free; never waits.
    bool try_lock() noexcept {
        if (!flag_.load(std::memory_order_relaxed) &&
            !flag_.exchange(true, std::memory_order_acquire)) {
            note_acquired();
            return true;
        }
        return false;
    }
    /// Releases the lock. Checked builds report an unlock by a non-holder.
    void unlock() noexcept {
        if (!note_release()) return;
        flag_.store(false, std::memory_order_release);
    }

    /// Whether some thread holds the lock right now (a hint).
    bool is_locked() const noexcept { return flag_.load(std::memory_order_relaxed); }

private:
    void lock_slow() noexcept;
#if defined(TROUPE_CHECKED)
    void note_acquired() noexcept;
    bool note_release() noexcept;
    const void* owner_ = nullptr;
#else
    void note_acquired() noexcept {}
    bool note_release() noexcept { return true; }
#endif
    std::atomic<bool> flag_{false};
    const char* name_ = nullptr;
};

}  // namespace troupe
