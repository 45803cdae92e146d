#pragma once
/// `barging_lock`: a blocking lock with Go's two modes. While waits are
/// short a running thread may take a free lock ahead of the queued waiters
/// (barging: the lock stays on a core whose cache holds it); once the
/// longest waiter has waited `starvation_after` (1 ms by default), unlock
/// hands the lock to it directly, FIFO, like `blocking_lock`.
///
///     troupe::barging_lock l{"counter"};
///     { std::lock_guard g{l}; ++hits; }     // or TROUPE_MUTEX / mutex(l)
///
/// Choose it for short critical sections hammered from several cores, where
/// throughput matters more than strict order; choose `blocking_lock` when
/// waiters must be served first-come first-served. Works from user threads
/// and OS threads alike; selectable (a `waituntil` clause is always handed
/// the lock, FIFO); usable with `condition_variable` (without wait
/// morphing: a notified waiter competes for the lock like any other
/// thread). Only the owner may unlock. Not recursive.
///
/// Waiting: an OS thread that finds the lock held first polls it a few
/// times with growing pauses (`options::spins`, about 4 us) and takes it if
/// it comes free meanwhile, without queueing or being woken; then it queues
/// and parks. A user thread queues at once (it never spins holding its
/// processor). A waiter's wait, for the starvation bound below, counts from
/// when it queues.
///
/// Normal mode: unlock frees the lock and wakes the first waiter, which then
/// competes for it with running threads; a waiter that loses queues again at
/// the head of the queue, keeping the time it started waiting. Only one woken
/// waiter is in flight at a time (an unlock meanwhile wakes nobody). Starved
/// mode, decided by each unlock that finds waiters: if the first waiter (or
/// the woken waiter still on its way) has waited at least
/// `starvation_after`, it is made the owner before it runs, so nobody can
/// barge in between. Details: docs/locks.md.
///
/// Cost: one atomic word (owner, waiters, queue lock) as for `blocking_lock`;
/// uncontended `lock` and `unlock` are one CAS each. A contended `lock` from
/// an OS thread spins up to `options::spins` polls (loads; a CAS only on a
/// free word), then reads the clock once when it first queues; an unlock
/// that wakes a waiter reads it once.
///
/// Every build reports, naming the lock, unlocking a lock the caller does
/// not hold and re-locking it while holding it (misuse reports of kind
/// `error`: by default the program prints it and aborts; if a custom
/// handler returns, the call had no effect). Each is one compare on the
/// path it guards. Checked builds (-Dchecked=true) also report destroying
/// it while held or waited on and a stray wake of a waiter.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "troupe/context.hpp"
#include "troupe/defaults/core.hpp"
#include "troupe/detail/wait_word.hpp"
#include "troupe/select.hpp"

namespace troupe {

class barging_lock {
public:
    using clock = std::chrono::steady_clock;

    /// Settings of one lock.
    struct options {
        /// A waiter that has waited this long is handed the lock at the next
        /// unlock (no barging past it). 0: always hand off (FIFO, as
        /// `blocking_lock`).
        std::chrono::nanoseconds starvation_after = defaults::core::barging_starvation;
        /// Where waits are timed; nullptr: `clock::now`. A seam for tests,
        /// which inject a clock they advance by hand. Must be nothrow and
        /// callable from any thread.
        clock::time_point (*now)() noexcept = nullptr;
        /// Polls of the word an OS-thread waiter makes before it queues,
        /// with pauses doubling from 1 to `barging_spin_max_gap` between
        /// them; 0: queue at once. Ignored (no spin) for user threads and
        /// when the process may run on one CPU only.
        int spins = defaults::core::barging_spins;
    };

    /// `name` (not copied; may be nullptr) names the lock in misuse reports.
    explicit barging_lock(const char* name = nullptr) noexcept : name_(name) {}
    barging_lock(const char* name, options o) noexcept : name_(name), options_(o) {}
    barging_lock(const barging_lock&) = delete;
    barging_lock& operator=(const barging_lock&) = delete;
    /// Checked builds report destruction while held or waited on.
    ~barging_lock();

    /// Blocks until the caller owns the lock: an OS thread spins briefly
    /// (`options::spins`), then parks; a user thread parks at once. Throws
    /// nothing itself (a misuse handler may throw in checked builds);
    /// strong guarantee.
    void lock() {
        context& me = this_context();
        std::uintptr_t expected = 0;
        // Fast path: free with nobody waiting -> held by me, one CAS.
        // acquire pairs with the previous owner's release.
        if (word_.compare_exchange_strong(expected, to_word(me), std::memory_order_acquire,
                                          std::memory_order_relaxed)) [[likely]]
            return;
        lock_slow(me);
    }
    /// Takes the lock if it is free, even if threads wait for it (a free
    /// lock with waiters exists only in normal mode); never blocks; nothrow.
    bool try_lock() noexcept;
    /// Releases the lock: frees it and wakes the first waiter to compete,
    /// or hands it to that waiter if it has waited `starvation_after` (or is
    /// a `waituntil` clause). Never blocks. Every build reports an unlock
    /// by a thread that does not hold the lock (a misuse report of kind
    /// `error`, naming the lock; the lock is left as it was): throws only
    /// what the misuse handler throws.
    void unlock() {
        if constexpr (!checked_build) {
            // Fast path: held by us with no flag bit -> free, one CAS.
            // Expecting exactly us is the ownership check: another owner,
            // W or L make it fail into unlock_slow. release publishes the
            // critical section.
            std::uintptr_t w = to_word(this_context());
            if (word_.compare_exchange_strong(w, 0, std::memory_order_release,
                                              std::memory_order_relaxed)) [[likely]]
                return;
        }
        unlock_slow();
    }

    /// Threads queued for the lock (a snapshot; a woken waiter about to
    /// compete is not counted). nothrow.
    std::size_t waiters() const noexcept;
    /// Whether the calling context owns the lock. nothrow, lock-free.
    bool owned_by_caller() const noexcept { return owner() == &this_context(); }
    const char* name() const noexcept { return name_; }
    /// Unlocks that handed the lock to a waiter that had waited at least
    /// `starvation_after` (starved mode), since construction. nothrow.
    std::uint64_t starved_handoffs() const noexcept {
        return starved_handoffs_.load(std::memory_order_relaxed);
    }

    // Selectable: acquiring the lock is the clause's operation; the lock is
    // held while the clause body runs and released by unregister_select. A
    // queued clause is always handed the lock (FIFO, never asked to compete).
    // All three: nothrow.
    bool register_select(select_node& n) noexcept;
    bool unregister_select(select_node& n) noexcept;
    /// How a dump of a waituntil names the clause.
    const char* select_kind() const noexcept { return "barging_lock"; }
    bool on_selected(select_node&) noexcept { return true; }

private:
    static_assert(alignof(context) > detail::flag_bits, "the owner's low bits hold W and L");
    static std::uintptr_t to_word(const context& c) noexcept {
        return reinterpret_cast<std::uintptr_t>(&c);
    }
    static const context* owner_of(std::uintptr_t w) noexcept {
        return reinterpret_cast<const context*>(w & ~detail::flag_bits);
    }
    const context* owner() const noexcept {
        return owner_of(word_.load(std::memory_order_acquire));
    }
    clock::time_point now() const noexcept { return options_.now ? options_.now() : clock::now(); }

    void lock_slow(context& me);
    // An OS thread's bounded spin before it queues: polls the word and
    // barges if it is free; false when the spin is spent (or skipped).
    bool spin_then_barge(const context& me) noexcept;
    void unlock_slow();
    // The caller owns the lock, waiters are queued and it holds L: wakes or
    // hands off to the first live waiter, or frees the lock; releases L.
    void release_locked() noexcept;
    // Under L: makes the waituntil node `n` (popped) the owner, commits it,
    // releases L, wakes it if owed.
    void hand_off_clause(select_node& n) noexcept;

    // The lock word: owner context address | W | L; 0 = free, nobody waits;
    // W alone = free, waiters queued or one woken (normal mode only).
    // W is set iff the queue is non-empty or a woken waiter is in flight.
    // docs/locks.md.
    mutable std::atomic<std::uintptr_t> word_{0};
    node_queue waiting_;  // under L
    // Under L: the woken waiter on its way to compete (nullptr: none), when
    // it started waiting, and unlocks that freed the lock since it was woken
    // (the clock is read every few of them, not every time).
    const context* woken_ = nullptr;
    clock::time_point woken_since_{};
    unsigned unlocks_while_woken_ = 0;
    const char* name_;
    options options_{};
    std::atomic<std::uint64_t> starved_handoffs_{0};
};

static_assert(selectable<barging_lock>);

}  // namespace troupe
