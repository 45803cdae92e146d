#pragma once
// Internal: the counter behind wait_group and latch. The count, a waiters
// flag and the queue lock share one atomic word (docs/locks.md): waiters
// park until the count is zero; the decrement that reaches zero wakes them
// all. Adding or subtracting with nobody waiting is one CAS.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "troupe/detail/wait_word.hpp"
#include "troupe/select.hpp"
#include "troupe/stop_token.hpp"

namespace troupe::detail {

class countdown {
public:
    countdown(std::size_t initial, const char* kind, const char* name) noexcept
        : word_(initial << payload_shift), kind_(kind), name_(name) {}
    countdown(const countdown&) = delete;
    countdown& operator=(const countdown&) = delete;
    /// Checked builds report destruction with waiters.
    ~countdown();

    /// Adds `n`. Never blocks (spins while a waiter holds the queue lock for
    /// a few instructions); nothrow.
    void add(std::size_t n) noexcept {
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        // relaxed: an add publishes nothing; the count only has to be in
        // place before the matching count_down (program order, or the
        // thread start that follows it), and a waiter acquires from the
        // count_down that reaches zero.
        if (!(w & queue_lock_bit) &&
            word_.compare_exchange_strong(w, w + n * unit, std::memory_order_relaxed,
                                          std::memory_order_relaxed)) [[likely]]
            return;
        add_slow(n);
    }
    /// Subtracts `n`; the step that reaches zero wakes every waiter. If `n`
    /// exceeds the count, reports misuse `what` and changes nothing (a
    /// custom misuse handler may throw: then nothing changed either).
    void count_down(std::size_t n, const char* what) {
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        // Fast path: L clear, the count stays positive, or reaches zero with
        // nobody waiting. release: the caller's writes happen before a
        // waiter that sees the count zero (its acquire load).
        if (!(w & queue_lock_bit) && (w >> payload_shift) >= n &&
            ((w >> payload_shift) > n || !(w & waiters_bit)) &&
            word_.compare_exchange_strong(w, w - n * unit, std::memory_order_release,
                                          std::memory_order_relaxed)) [[likely]]
            return;
        count_down_slow(n, what);
    }
    /// The count (a snapshot; acquire: zero means every count_down's writes
    /// are visible). Lock-free.
    std::size_t count() const noexcept {
        return word_.load(std::memory_order_acquire) >> payload_shift;
    }
    /// Parks until the count is zero. Returns at once if it is.
    void wait() {
        if (count() != 0) [[unlikely]]
            wait_slow();
    }
    /// As wait(), but throws `cancelled` (having changed nothing) if `tok`
    /// is stopped first.
    void wait(const stop_token& tok);
    /// Threads and select clauses waiting (a snapshot).
    std::size_t waiters() const noexcept;

    /// Selectable: available while the count is zero; the clause takes
    /// nothing. nothrow.
    bool register_select(select_node& n) noexcept;
    bool unregister_select(select_node& n) noexcept;
    bool on_selected(select_node&) noexcept { return true; }
    bool select_ready_hint() const noexcept { return count() == 0; }
    const char* select_kind() const noexcept { return kind_; }
    const char* name() const noexcept { return name_; }

private:
    static constexpr std::uintptr_t unit = std::uintptr_t{1} << payload_shift;
    void add_slow(std::size_t n) noexcept;
    void count_down_slow(std::size_t n, const char* what);
    void wait_slow();

    // count << 2 | W | L. Invariant C1: W set implies a non-zero count, at
    // every moment L is clear (the step to zero empties the queue).
    mutable std::atomic<std::uintptr_t> word_;
    node_queue waiting_;  // under L
    const char* kind_;
    const char* name_;
};

/// What wait_group and latch share: waiting for the count to reach zero,
/// selecting on it, and looking at it. Their own members add and count
/// down.
class countdown_waits {
public:
    /// Parks until the counter is zero (returns at once if it is). The
    /// writes before every count-down are visible afterwards. Throws
    /// nothing.
    void wait() const { c_.wait(); }
    /// As wait(), but throws `cancelled` if `tok` is stopped before the
    /// counter reaches zero (nothing changed: the counter is not affected).
    void wait(const stop_token& tok) const { c_.wait(tok); }

    /// The counter now (a snapshot; acquire: zero means every count-down's
    /// writes are visible). nothrow.
    std::size_t count() const noexcept { return c_.count(); }
    /// Threads (and select clauses) waiting now (a snapshot). nothrow.
    std::size_t waiters() const noexcept { return c_.waiters(); }
    /// The name given at construction, or nullptr.
    const char* name() const noexcept { return c_.name(); }

    /// Selectable: available while the counter is zero; the clause takes
    /// nothing. nothrow.
    bool register_select(select_node& n) noexcept { return c_.register_select(n); }
    bool unregister_select(select_node& n) noexcept { return c_.unregister_select(n); }
    bool on_selected(select_node& n) noexcept { return c_.on_selected(n); }
    bool select_ready_hint() const noexcept { return c_.select_ready_hint(); }
    const char* select_kind() const noexcept { return c_.select_kind(); }
    const char* select_name() const noexcept { return c_.name(); }
    const void* select_resource() const noexcept { return &c_; }

protected:
    countdown_waits(std::size_t initial, const char* kind, const char* name) noexcept
        : c_(initial, kind, name) {}
    ~countdown_waits() = default;

    mutable countdown c_;
};

}  // namespace troupe::detail
