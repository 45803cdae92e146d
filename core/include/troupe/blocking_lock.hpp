#pragma once
/// Blocking locks with FIFO hand-off: `blocking_lock` (single acquisition)
/// and `owner_lock` (recursive). Both are selectable.
///
///     troupe::blocking_lock l{"accounts"};
///     { std::lock_guard g{l}; balance += 10; }
///
/// A waiter queues in FIFO order and parks; `unlock` hands ownership
/// directly to the first waiter still interested (no barging, no window in
/// which the lock is free while someone waits), then wakes it. Works from
/// user threads and OS threads alike. Only the owner may unlock.
///
/// Cost: the whole state is one atomic word (owner, waiters, queue lock;
/// see docs/locks.md). An uncontended `lock` is one CAS, an uncontended
/// `unlock` one CAS, as for `std::mutex`; only a contended path touches the
/// wait queue.
///
/// Every build reports, naming the lock, re-locking a non-recursive lock
/// the caller holds and unlocking a lock the caller does not hold (misuse reports of kind `error`:
/// by default the program prints it and aborts, instead of hanging or releasing another thread's
/// lock; a custom misuse handler may throw, then the call throws and nothing changed; if it
/// returns, the call had no effect). Each is one compare on the path it guards. Checked builds
/// (-Dchecked=true) also report destroying a lock with waiters or held, a
/// stray wake of a waiter, and a lock wait that closes a cycle of waits (a
/// deadlock), when it begins.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "troupe/context.hpp"
#include "troupe/detail/wait_word.hpp"
#include "troupe/error.hpp"
#include "troupe/select.hpp"
#include "troupe/stop_token.hpp"

namespace troupe {

namespace detail {

class blocking_lock_base {
public:
    blocking_lock_base(const blocking_lock_base&) = delete;
    blocking_lock_base& operator=(const blocking_lock_base&) = delete;

    /// Blocks (parks) until the caller owns the lock. Throws nothing itself
    /// (a misuse handler may throw: re-locking a blocking_lock the caller
    /// holds, or, in checked builds, a wait that closes a deadlock cycle);
    /// strong guarantee.
    void lock() {
        context& me = this_context();
        std::uintptr_t expected = 0;
        // Fast path: free -> held by me, one CAS. acquire pairs with the
        // previous owner's release.
        if (word_.compare_exchange_strong(expected, to_word(me), std::memory_order_acquire,
                                          std::memory_order_relaxed)) [[likely]] {
            count_ = 1;  // owner-private from here on
            return;
        }
        lock_slow(me);
    }
    /// As lock(), but throws `cancelled` if `tok` is stopped before the
    /// caller owns the lock: it then holds nothing, and waiters behind it
    /// keep their places (a stop already requested throws at once).
    /// Strong guarantee.
    void lock(const stop_token& tok);
    /// Takes the lock if free (or held by the caller, when recursive); never
    /// blocks; nothrow.
    bool try_lock() noexcept;
    /// Releases one level; at zero hands the lock to the first live waiter
    /// (making it the owner before waking it) or frees it. Never blocks.
    /// Called by a thread that does not hold the lock: reported (see
    /// above), and the lock is left as it was; throws only what the misuse
    /// handler throws.
    void unlock() {
        if constexpr (!checked_build) {
            const std::uintptr_t me = to_word(this_context());
            // A recursive level: ours only if the word names us (our own
            // store, so a relaxed load sees it); count_ is read only then.
            if (recursive_ && (word_.load(std::memory_order_relaxed) & ~flag_bits) == me &&
                count_ > 1) {
                --count_;
                return;
            }
            // Fast path: held by us with no waiters and L clear -> free, one
            // CAS. Expecting exactly `me` is the ownership check (every
            // build): a word naming another owner, or any flag bit (waiters,
            // someone queueing), makes it fail into unlock_slow, which
            // reports a non-owner's unlock. release publishes the critical
            // section.
            std::uintptr_t w = me;
            if (word_.compare_exchange_strong(w, 0, std::memory_order_release,
                                              std::memory_order_relaxed)) [[likely]]
                return;
        }
        unlock_slow();
    }

    /// Number of threads queued for the lock (a snapshot). nothrow.
    std::size_t waiters() const noexcept;
    /// Whether the calling context owns the lock. nothrow, lock-free.
    bool owned_by_caller() const noexcept { return owner() == &this_context(); }
    const char* name() const noexcept { return name_; }

    // Selectable: acquiring the lock is the clause's operation; the lock is
    // held while the clause body runs and released by unregister_select.
    // register_select: nothrow; a free lock is won with one CAS, a claim and
    // a store. unregister_select: nothrow.
    bool register_select(select_node& n) noexcept;
    bool unregister_select(select_node& n) noexcept;
    /// How a dump of a waituntil names the clause ("blocking_lock", "owner_lock").
    const char* select_kind() const noexcept { return kind_; }
    bool on_selected(select_node&) noexcept { return true; }

    // Condition-variable hooks (wait morphing). The owner records its
    // recursion depth, releases every level, and is later either handed the
    // lock back by a notify (its plain node queued here, or the lock granted
    // to it at once; either way with one level, then cv_restore_depth) or
    // re-acquires it after a timeout (cv_reacquire, depth included).
    std::size_t cv_depth() const noexcept { return count_; }
    void cv_release();
    void cv_enqueue_or_grant(select_node& plain_node) noexcept;
    /// The caller owns the lock, handed over by a notify: restores its
    /// recursion depth (owner-private, I3 in blocking_lock.cpp). nothrow.
    void cv_restore_depth(std::size_t depth) noexcept { count_ = depth; }
    void cv_reacquire(std::size_t depth);
    /// Whether `c` owns the lock (a cv waiter's completion test). Lock-free.
    bool cv_granted(const context& c) const noexcept { return owner() == &c; }

protected:
    blocking_lock_base(bool recursive, const char* kind, const char* name) noexcept
        : kind_(kind), name_(name), recursive_(recursive) {}
    ~blocking_lock_base();

private:
    static_assert(alignof(context) > flag_bits, "the owner's low bits hold W and L");
    static std::uintptr_t to_word(const context& c) noexcept {
        return reinterpret_cast<std::uintptr_t>(&c);
    }
    static const context* owner_of(std::uintptr_t w) noexcept {
        return reinterpret_cast<const context*>(w & ~flag_bits);
    }
    const context* owner() const noexcept {
        return owner_of(word_.load(std::memory_order_acquire));
    }

    void lock_slow(context& me);
    void unlock_slow();
    // Takes the lock with `depth` levels, recurses, or queues `n` (then
    // false: the caller parks until it owns the lock).
    bool acquire_or_enqueue(select_node& n, std::size_t depth);
    // One attempt to queue `n` behind the owner named by `w` (a value of
    // word_ the caller just read, with an owner): true once `n` is queued
    // and W published; false (after a pause if L was held) when the caller
    // must read the word again. Shared by lock_slow and register_select.
    bool enqueue_behind_owner(select_node& n, std::uintptr_t w, queue_backoff& b) noexcept;
    // The caller owns the lock: drops every level, handing it to the first
    // live waiter or freeing it.
    void release_all() noexcept;
    // Under L (word value `w`, L clear in it): pops the first live waiter
    // and makes it the owner, or frees the lock; releases L.
    void hand_off_locked() noexcept;
    void park_until_owner(const context& me);
    // Dumps: a waiter's edge to the owner, and the lock's state.
    static const context* holder_for_dump(const void* self) noexcept;
    static std::string details_for_dump(const void* self);
    static const wait_describer wait_info;

    // The lock word: owner context address | W | L; 0 = free. See
    // docs/locks.md for the state machine.
    mutable std::atomic<std::uintptr_t> word_{0};
    // Recursion depth. Written only by the owner, or by whoever transfers
    // ownership before its release store of word_; read only by the owner.
    std::size_t count_ = 0;
    node_queue waiting_;  // under L
    const char* kind_;
    const char* name_;
    const bool recursive_;
};

}  // namespace detail

/// A non-recursive blocking lock with FIFO hand-off. Selectable.
class blocking_lock : public detail::blocking_lock_base {
public:
    /// `name` (not copied; may be nullptr) names the lock in misuse reports.
    explicit blocking_lock(const char* name = nullptr) noexcept
        : blocking_lock_base(false, "blocking_lock", name) {}
};

/// A recursive blocking lock: the owner may lock again; it is released when
/// unlocked as often. Only the owner may unlock. Selectable.
class owner_lock : public detail::blocking_lock_base {
public:
    /// `name` (not copied; may be nullptr) names the lock in misuse reports.
    explicit owner_lock(const char* name = nullptr) noexcept
        : blocking_lock_base(true, "owner_lock", name) {}
};

static_assert(selectable<blocking_lock>);
static_assert(selectable<owner_lock>);

}  // namespace troupe
