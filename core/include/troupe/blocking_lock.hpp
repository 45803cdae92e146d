#pragma once
/// Blocking locks with FIFO hand-off: `blocking_lock` (single acquisition)
/// and `owner_lock` (recursive). Both are selectable.
///
///     troupe::blocking_lock l{"accounts"};
///     { std::lock_guard g{l}; balance += 10; }
///
/// A waiter queues in FIFO order and parks; `unlock` hands ownership
/// directly to the first waiter still interested (no barging, no window in
/// which the lock is free), then wakes it. Works from user threads and OS
/// threads alike. Only the owner may unlock. Checked builds (-Dchecked=true)
/// report, naming the lock: unlocking a lock the caller does not hold,
/// re-locking a non-recursive lock the caller holds, destroying a lock with
/// waiters or held. A release build does not check: re-locking a
/// blocking_lock you hold deadlocks.
#include <cstddef>

#include "troupe/context.hpp"
#include "troupe/select.hpp"
#include "troupe/spinlock.hpp"

namespace troupe {

namespace detail {

class blocking_lock_base {
public:
    blocking_lock_base(const blocking_lock_base&) = delete;
    blocking_lock_base& operator=(const blocking_lock_base&) = delete;

    /// Blocks (parks) until the caller owns the lock.
    void lock();
    /// Takes the lock if free (or held by the caller, when recursive).
    bool try_lock();
    /// Releases one level; at zero hands the lock to the first live waiter.
    void unlock();

    /// Number of threads queued for the lock (a snapshot).
    std::size_t waiters() const noexcept;
    /// Whether the calling context owns the lock.
    bool owned_by_caller() const noexcept;
    const char* name() const noexcept { return name_; }

    // Selectable: acquiring the lock is the clause's operation; the lock is
    // held while the clause body runs and released by unregister_select.
    bool register_select(select_node& n);
    bool unregister_select(select_node& n);
    bool on_selected(select_node&) noexcept { return true; }

    // Condition-variable hooks (wait morphing). The owner records its
    // recursion depth, releases every level, and is later either handed the
    // lock back by a notify (its plain node queued here) or re-acquires.
    std::size_t cv_depth() const noexcept { return count_; }
    void cv_release();
    void cv_enqueue_or_grant(select_node& plain_node);  // node.extra = depth
    void cv_reacquire(std::size_t depth);

protected:
    blocking_lock_base(bool recursive, const char* kind, const char* name) noexcept
        : kind_(kind), name_(name), recursive_(recursive) {}
    ~blocking_lock_base();

private:
    bool acquire_or_enqueue(select_node& n, std::size_t depth);  // under guard_
    void hand_off_or_free();                                     // under guard_, unlocks it

    mutable spinlock guard_;
    context* owner_ = nullptr;
    std::size_t count_ = 0;
    node_queue waiting_;
    const char* kind_;
    const char* name_;
    bool recursive_;
};

}  // namespace detail

/// A non-recursive blocking lock with FIFO hand-off. Selectable.
class blocking_lock : public detail::blocking_lock_base {
public:
    explicit blocking_lock(const char* name = nullptr) noexcept
        : blocking_lock_base(false, "blocking_lock", name) {}
};

/// A recursive blocking lock: the owner may lock again; it is released when
/// unlocked as often. Only the owner may unlock. Selectable.
class owner_lock : public detail::blocking_lock_base {
public:
    explicit owner_lock(const char* name = nullptr) noexcept
        : blocking_lock_base(true, "owner_lock", name) {}
};

static_assert(selectable<blocking_lock>);
static_assert(selectable<owner_lock>);

}  // namespace troupe
