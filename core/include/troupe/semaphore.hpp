#pragma once
/// A counting semaphore with FIFO hand-off. Selectable.
///
///     troupe::semaphore ready{0};
///     ready.release();          // V
///     ready.acquire();          // P: parks while the count is zero
///
/// `release(n)` hands units straight to queued waiters in FIFO order (they
/// do not re-compete), and adds only the remainder to the count.
///
/// Cost: the count, a waiters flag and the queue lock share one atomic word
/// (docs/locks.md). `acquire` with units available and `release` with
/// nobody waiting are one CAS each and take no lock.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "troupe/detail/wait_word.hpp"
#include "troupe/select.hpp"

namespace troupe {

class semaphore {
public:
    /// A semaphore holding `initial` units; `name` (not copied) names it in
    /// misuse reports.
    explicit semaphore(std::size_t initial = 0, const char* name = nullptr) noexcept
        : word_(initial << detail::payload_shift), name_(name) {}
    semaphore(const semaphore&) = delete;
    semaphore& operator=(const semaphore&) = delete;
    /// Checked builds report destruction with waiters.
    ~semaphore();

    /// Takes one unit, parking while none is available (FIFO among
    /// waiters). Throws nothing (a checked build's misuse handler aside);
    /// strong guarantee.
    void acquire() {
        // Fast path: units and L clear (then W is clear too: units are
        // handed to waiters before they reach the count). acquire pairs with
        // the release that added the unit.
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        if (w >= unit && !(w & detail::queue_lock_bit) &&
            word_.compare_exchange_strong(w, w - unit, std::memory_order_acquire,
                                          std::memory_order_relaxed)) [[likely]]
            return;
        acquire_slow();
    }
    /// Takes one unit if available; never blocks; nothrow.
    bool try_acquire() noexcept;
    /// Adds `n` units: first to waiters (FIFO, each woken), then to the
    /// count. Never blocks; nothrow.
    void release(std::size_t n = 1) noexcept {
        // Fast path: nobody waits and L clear: add to the count, one CAS.
        // release publishes what we did before to the acquirer.
        std::uintptr_t w = word_.load(std::memory_order_relaxed);
        if (!(w & detail::flag_bits) &&
            word_.compare_exchange_strong(w, w + n * unit, std::memory_order_release,
                                          std::memory_order_relaxed)) [[likely]]
            return;
        release_slow(n);
    }

    /// Units available now (a snapshot); lock-free.
    std::size_t count() const noexcept {
        return word_.load(std::memory_order_relaxed) >> detail::payload_shift;
    }
    /// Threads queued (a snapshot).
    std::size_t waiters() const noexcept;

    /// Selectable: taking a unit is the clause's operation. nothrow.
    bool register_select(select_node& n) noexcept;
    bool unregister_select(select_node& n) noexcept;
    /// How a dump of a waituntil names the clause, and the semaphore's name.
    const char* select_kind() const noexcept { return "semaphore"; }
    const char* name() const noexcept { return name_; }
    bool on_selected(select_node&) noexcept { return true; }

private:
    static constexpr std::uintptr_t unit = std::uintptr_t{1} << detail::payload_shift;
    void acquire_slow();
    void release_slow(std::size_t n) noexcept;

    // count << 2 | W | L. Invariant: a non-zero count implies an empty queue.
    mutable std::atomic<std::uintptr_t> word_;
    node_queue waiting_;  // under L
    const char* name_;
};

static_assert(selectable<semaphore>);

}  // namespace troupe
