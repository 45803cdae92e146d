#pragma once
/// The select_node protocol: how a blocked thread waits on one or many
/// resources (locks, futures, channels, timeouts) so that `waituntil` can be
/// layered on top without core knowing about it.
///
///     troupe::select_node n{troupe::this_context()};
///     if (!fut.register_select(n)) troupe::park();   // the resource wakes us
///     fut.unregister_select(n);
///
/// A node lives on the waiting thread's stack and is linked into the wait
/// queue of each resource it waits on. It is in one of three modes:
///  - plain: a single blocking wait (lock(), get()); nobody races for it;
///  - exclusive (special OR): many nodes share one status word and exactly
///    one resource may win it, by CAS from `unsat` to the winning node's
///    address, *before* performing its operation;
///  - general (AND/OR trees): each node has its own status word, and a shared
///    park counter decides which availability must unpark the waiter.
/// Resources call `try_claim()` under their own lock; the winner performs
/// the operation, calls `commit()` still under the lock, and after unlocking
/// `unpark_waiter()` if commit said so (or `wake()` under the lock). A loser
/// must neither perform the operation nor unpark.
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "troupe/context.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/wake_guard.hpp"

namespace troupe {

/// Values of a status word. In exclusive mode a won status holds the address
/// of the winning node instead of `sat`.
enum class select_status : std::uintptr_t {
    unsat = 0,    ///< not yet satisfied
    pending = 1,  ///< a resource is mid-handshake (two selectors on one channel)
    sat = 2,      ///< satisfied, body not run yet (general mode)
    run = 3,      ///< body has run (general mode)
};

/// The record a resource keeps beside a waiting node when the node alone is
/// not enough (a channel: the element to move and how the wait ended; a
/// condition variable: the waiter's second node and its lock). A resource
/// derives its own record type from this, attaches it to the node it queues
/// (select_node::attach) and reads it back with select_node::record<R>(),
/// naming its own type: a queue holds nodes of one resource, so the record
/// of a node it holds is always that resource's. Resources that need
/// nothing but the node (future, semaphore, the blocking locks) attach none.
class wait_record {
protected:
    wait_record() noexcept = default;
    ~wait_record() = default;
    wait_record(const wait_record&) = default;
    wait_record& operator=(const wait_record&) = default;
};

class select_node {
public:
    /// A plain node: a single blocking wait by `waiter`.
    explicit select_node(context& waiter) noexcept : waiter_(&waiter) {}

    /// An exclusive-mode node sharing `status` with the other clauses.
    select_node(context& waiter, std::atomic<std::uintptr_t>& status) noexcept
        : waiter_(&waiter), status_(&status) {}

    /// A general-mode node with its own `status` and the statement's counter.
    select_node(context& waiter, std::atomic<std::uintptr_t>& status,
                std::atomic<int>& park_counter) noexcept
        : waiter_(&waiter), status_(&status), park_counter_(&park_counter) {}

    select_node(const select_node&) = delete;
    select_node& operator=(const select_node&) = delete;

    context& waiter() const noexcept { return *waiter_; }
    bool is_plain() const noexcept { return status_ == nullptr; }
    bool is_exclusive() const noexcept { return status_ && !park_counter_; }
    bool is_general() const noexcept { return park_counter_ != nullptr; }

    /// Tries to win this waiter for the calling resource. Plain nodes always
    /// win. Exclusive nodes win by CAS unsat -> &node (spinning while a
    /// handshake holds the word `pending`); general nodes by CAS unsat -> sat.
    /// acq_rel: the winner's later operation must not move before the CAS, and
    /// it must see what the waiter wrote before registering.
    bool try_claim() noexcept {
        if (!status_) return true;
        const auto won = is_exclusive() ? reinterpret_cast<std::uintptr_t>(this)
                                        : std::uintptr_t(select_status::sat);
        for (;;) {
            auto expected = std::uintptr_t(select_status::unsat);
            if (status_->compare_exchange_strong(expected, won, std::memory_order_acq_rel))
                return true;
            if (expected != std::uintptr_t(select_status::pending)) return false;
            detail::cpu_relax();  // a handshake is in flight; it resolves in a few steps
        }
    }

    /// True if this node's statement was won by this node (exclusive mode)
    /// or its own status is satisfied/run (general mode); plain: always.
    bool is_claimed() const noexcept {
        if (!status_) return true;
        auto s = status_->load(std::memory_order_acquire);
        return is_exclusive() ? s == reinterpret_cast<std::uintptr_t>(this)
                              : s >= std::uintptr_t(select_status::sat);
    }

    /// Step 1 of waking, called with the resource's lock still held, after
    /// a successful try_claim() and the operation. Returns true if the waiter
    /// must be unparked (then call unpark_waiter() after unlocking: the node
    /// stays valid until that call). Returns false if the waiter is awake: do
    /// not touch the node again. In general mode the park counter makes exactly
    /// one availability per park unpark: the waiter decrements before parking
    /// and parks on a negative result; we increment, and owe the unpark only
    /// when we bring it back to zero. An awake general-mode waiter may finish
    /// its statement as soon as the resource lock is free, which is why this
    /// step must happen under it.
    bool commit() noexcept {
        if (!park_counter_ || park_counter_->fetch_add(1, std::memory_order_acq_rel) + 1 == 0)
            return true;
        // The waiter is awake: this (under the resource's lock, which the
        // waiter's unregister_select takes) is our last touch of the node.
        released_.store(true, std::memory_order_release);
        return false;
    }

    /// Step 2: unparks the waiter; the caller's last touch of the node. The
    /// node is marked released *before* the unpark, reading the waiter's
    /// context first: a waiter that re-checks released() after every park()
    /// (a stray unpark may end a park early) never leaves while a resource
    /// still reads its node. Only the context itself is touched afterwards.
    void unpark_waiter() noexcept {
        context* const w = waiter_;
        // A waiter that sees `released` may leave (and its thread end)
        // before our unpark: announce it first (detail/wake_guard.hpp).
        detail::wake_guard g{*w};
        released_.store(true, std::memory_order_release);
        unpark(*w);
    }

    /// Plain nodes: grant() and the unpark of the waiter, as the resource's
    /// last touch of the node (the node may be gone once granted; only the
    /// context, read first and announced, is touched after). nothrow.
    void grant_and_unpark() noexcept { unpark_waiter(); }

    /// True once the resource that won this node made its last touch of it
    /// (commit() said the waiter is awake, or unpark_waiter() ran). A waiter
    /// loops `while (!n.released()) park();` so that a stray unpark cannot
    /// complete its wait. Never set for a node won during registration.
    bool released() const noexcept { return released_.load(std::memory_order_acquire); }

    /// commit() and, if owed, unpark_waiter() in one call, for use while the
    /// resource's lock is still held (always safe), or after unlocking for
    /// plain and exclusive nodes (their waiter is blocked until unparked).
    void wake() noexcept {
        if (commit()) unpark_waiter();
    }

    /// Plain nodes: marks the waiter's operation complete. The resource calls
    /// it after dequeuing the node and performing the operation, with the
    /// waiter's context already read: it is the resource's last touch of the
    /// node (release: publishes the operation to the waiter), followed only by
    /// `unpark(context)`. A waiter parks until `granted()`, so a stray wake
    /// never lets it leave while the node is still in use.
    /// Same flag as released(): a granted node is one the resource let go of.
    void grant() noexcept { released_.store(true, std::memory_order_release); }
    /// Whether grant() was called (acquire: the operation is visible).
    bool granted() const noexcept { return released(); }

    /// Attaches the registering resource's record (before the node is
    /// queued; the record must outlive the wait). nothrow.
    void attach(wait_record& r) noexcept { record_ = &r; }
    /// The record attached by the resource, as that resource's own record
    /// type `R` (the resource names the type it attached). nothrow.
    template <std::derived_from<wait_record> R>
    R& record() const noexcept {
        return static_cast<R&>(*record_);
    }

    std::atomic<std::uintptr_t>* status_word() const noexcept { return status_; }

private:
    friend class node_queue;  // the only code that touches the links

    context* waiter_;
    std::atomic<std::uintptr_t>* status_ = nullptr;
    std::atomic<int>* park_counter_ = nullptr;
    // Set by the resource's last touch of the node (grant(), commit() when
    // the waiter is awake, unpark_waiter()): one flag for every way a wait
    // completes, so every waiter re-checks the same condition after park().
    std::atomic<bool> released_{false};
    wait_record* record_ = nullptr;
    // Intrusive links, owned by whichever node_queue the node is in.
    select_node* next_ = nullptr;
    select_node* prev_ = nullptr;
    bool queued_ = false;
};

/// What a resource provides to be waited on by `waituntil` (the select_node
/// protocol, docs/core.md).
///  - register_select(n): if the resource is available now and `n` is won,
///    perform the operation and return true; otherwise queue `n` (unless it
///    already lost) and return false.
///  - unregister_select(n): dequeue `n` if still queued and undo side effects
///    that must not outlive the statement; return true iff the clause body
///    must still run because the operation completed.
///  - on_selected(n): run on the waiter before the body; false skips it.
template <class R>
concept selectable = requires(R& r, select_node& n) {
    { r.register_select(n) } -> std::same_as<bool>;
    { r.unregister_select(n) } -> std::same_as<bool>;
    { r.on_selected(n) } -> std::same_as<bool>;
};

/// An intrusive FIFO of select nodes. Not synchronised: the owning resource
/// protects it with its own lock. The only owner of the nodes' links: a
/// node is in at most one queue at a time (a resource's wait queue, or a
/// list of waiters to wake after unlocking).
class node_queue {
public:
    node_queue() noexcept = default;
    node_queue(const node_queue&) = delete;
    node_queue& operator=(const node_queue&) = delete;

    bool empty() const noexcept { return head_ == nullptr; }
    std::size_t size() const noexcept { return size_; }
    select_node* front() const noexcept { return head_; }
    /// The node after `n` in the queue `n` is in (nullptr at the end). Read
    /// it before removing `n` to walk a queue while dropping nodes.
    static select_node* next_of(const select_node& n) noexcept { return n.next_; }

    void push_back(select_node& n) noexcept {
        n.next_ = nullptr;
        n.prev_ = tail_;
        if (tail_) tail_->next_ = &n;
        else head_ = &n;
        tail_ = &n;
        n.queued_ = true;
        ++size_;
    }
    /// Queues `n` first (a waiter that keeps its place after losing a race).
    void push_front(select_node& n) noexcept {
        n.prev_ = nullptr;
        n.next_ = head_;
        if (head_) head_->prev_ = &n;
        else tail_ = &n;
        head_ = &n;
        n.queued_ = true;
        ++size_;
    }
    select_node* pop_front() noexcept {
        select_node* n = head_;
        if (n) remove(*n);
        return n;
    }
    /// Unlinks `n`; returns false if it was not queued here.
    bool remove(select_node& n) noexcept {
        if (!n.queued_) return false;
        if (n.prev_) n.prev_->next_ = n.next_;
        else head_ = n.next_;
        if (n.next_) n.next_->prev_ = n.prev_;
        else tail_ = n.prev_;
        n.next_ = n.prev_ = nullptr;
        n.queued_ = false;
        --size_;
        return true;
    }
    /// Pops nodes until one is won by try_claim(); losers (their statement
    /// was already satisfied elsewhere) are dropped, never woken. Returns the
    /// won node, still to be woken by the caller, or nullptr.
    select_node* pop_claimed() noexcept {
        while (select_node* n = pop_front())
            if (n->try_claim()) return n;
        return nullptr;
    }

    /// Appends `n` (claimed, operation done, under the resource's lock) to
    /// this list of waiters to unpark after unlocking, if commit() says an
    /// unpark is owed. Use with unpark_all().
    void defer_wake(select_node& n) noexcept {
        if (n.commit()) push_back(n);
    }
    /// After unlocking: unparks every deferred waiter, in FIFO order. Each
    /// node is unlinked before its unpark, the last touch (unlinking the
    /// front node writes only the links of the node after it).
    void unpark_all() noexcept {
        while (select_node* n = pop_front()) n->unpark_waiter();
    }

private:
    select_node* head_ = nullptr;
    select_node* tail_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace troupe
