#pragma once
// Internal building blocks of channel<T>: the record a blocked operation
// leaves for its partner, the handshake that claims a partner for a
// rendezvous, and the wait itself. See docs/channels.md for the design.
#include <atomic>
#include <cstdint>
#include <new>
#include <string>
#include <utility>

#include "troupe/context.hpp"
#include "troupe/defaults/channels.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/error.hpp"
#include "troupe/select.hpp"
#include "troupe/thread.hpp"

namespace troupe::detail {

/// How a blocked channel operation ended.
enum class handoff : std::uint8_t {
    waiting,    ///< still queued (or being completed)
    done,       ///< a partner moved the element (wait morphing)
    closed,     ///< woken by close(): nothing moved
    destroyed,  ///< woken by the channel's destructor: nothing moved (misuse)
};

/// Who may touch a select clause's node next: the handshake that lets a
/// clause leave a channel without the channel (which may be destroyed at
/// any time once no thread is *inside* one of its operations) and lets the
/// channel drop a node without its waiter. Plain (non-select) waiters never
/// use it: they never unregister.
enum class link : std::uint8_t {
    linked,    ///< may be in a queue; the channel side may take it (busy)
    busy,      ///< the channel side is taking it, under the channel lock
    detached,  ///< out of every queue for good; `state` is final; the clause
               ///< must not touch the channel again for this node
    leaving,   ///< its clause unregisters it (takes the channel lock);
               ///< the channel side skips it and leaves it queued
};

/// The record a channel operation attaches to its select_node (a blocked
/// call's own, or a select clause's). Written by the partner under the
/// channel lock; `state` is stored (release) before the wake.
struct channel_waiter : troupe::wait_record {
    /// Producer: the T to move from. Consumer: raw storage for a T.
    void* elem = nullptr;
    std::atomic<handoff> state{handoff::waiting};
    /// Select clauses only (see `link`).
    std::atomic<link> linkage{link::linked};
    /// The channel's name, read under its lock at registration, for a
    /// clause that throws channel_closed after the channel is gone.
    const char* name = nullptr;
};

/// The record of a node queued on a channel (every such node has one).
inline channel_waiter& waiter_of(const select_node& n) noexcept {
    return n.record<channel_waiter>();
}

/// Channel side, under the channel lock: reserves queued node `n` (marks it
/// busy) unless its clause is leaving (then false: skip it, leave it queued:
/// its clause dequeues it). Plain nodes are always available.
inline bool reserve(select_node& n) noexcept {
    if (n.is_plain()) return true;
    auto expected = link::linked;
    // acq_rel: pairs with the clause's CAS to `leaving`; exactly one wins.
    return waiter_of(n).linkage.compare_exchange_strong(expected, link::busy,
                                                        std::memory_order_acq_rel);
}
/// Channel side, under the lock, after a reserved node left the queue and
/// its `state` is final: hands the node back to its clause for good. The
/// release store publishes `state` to a clause that reads `detached`
/// without the lock.
inline void detach(select_node& n) noexcept {
    if (!n.is_plain()) waiter_of(n).linkage.store(link::detached, std::memory_order_release);
}
/// Channel side, under the lock: a reserved node stays queued after all.
inline void unreserve(select_node& n) noexcept {
    if (!n.is_plain()) waiter_of(n).linkage.store(link::linked, std::memory_order_release);
}

/// Clause side, before touching the channel to unregister: true if the
/// clause must take the channel lock to dequeue its node (the channel is
/// then alive: its destructor waits for leaving nodes), false if the
/// channel side already detached it (state final; the channel may be gone).
inline bool begin_leaving(channel_waiter& w) noexcept {
    auto expected = link::linked;
    // Busy lasts only while a partner holds the channel lock: wait it out.
    while (!w.linkage.compare_exchange_weak(expected, link::leaving, std::memory_order_acq_rel)) {
        if (expected == link::detached || expected == link::leaving) return false;
        expected = link::linked;
        cpu_relax();
    }
    return true;
}

/// Pops queued nodes from the front until one is won by try_claim (returned
/// reserved: the caller completes it, then detach()es it). Nodes of
/// statements won elsewhere are dropped (detached, never woken); nodes
/// whose clause is leaving are skipped and stay queued. Under the lock.
inline select_node* pop_claimed(node_queue& q) noexcept {
    select_node* n = q.front();
    while (n) {
        select_node* const next = node_queue::next_of(*n);
        if (reserve(*n)) {
            q.remove(*n);
            if (n->try_claim()) return n;
            detach(*n);  // stale: its statement finished elsewhere
        }
        n = next;
    }
    return nullptr;
}

/// Uninitialised storage for one T (a consumer's destination).
template <class T>
class element_slot {
public:
    element_slot() noexcept = default;
    element_slot(const element_slot&) = delete;
    element_slot& operator=(const element_slot&) = delete;

    void* storage() noexcept { return bytes_; }
    T& get() noexcept { return *std::launder(reinterpret_cast<T*>(bytes_)); }
    /// Moves the element out and destroys the slot's copy.
    T take() noexcept {
        T v(std::move(get()));
        get().~T();
        return v;
    }

private:
    alignas(T) unsigned char bytes_[sizeof(T)];
};

/// Claims, for one rendezvous, both the registering operation's own select
/// status (`self`, null for a plain blocking call) and a queued partner's.
/// An exclusive (or general) self is held `pending` while we try partners,
/// so neither side can be won twice; two selectors doing this to each other
/// on two channels resolve by status-word address: the side with the higher
/// address steps back to `unsat` (letting the other claim it) until the
/// other's handshake is over. Plain selves need none of this.
class rendezvous_claim {
public:
    explicit rendezvous_claim(select_node* self) noexcept
        : self_(self && !self->is_plain() ? self : nullptr) {}

    /// Marks our status pending; false if our statement was already won.
    bool begin() noexcept {
        if (!self_) return true;
        auto expected = std::uintptr_t(select_status::unsat);
        return self_->status_word()->compare_exchange_strong(
            expected, std::uintptr_t(select_status::pending), std::memory_order_acq_rel);
    }
    /// We performed the operation: our clause wins.
    void commit() noexcept {
        if (self_) self_->status_word()->store(won_value(*self_), std::memory_order_release);
    }
    /// No partner: release our status for others (we will queue).
    void abort() noexcept {
        if (self_)
            self_->status_word()->store(std::uintptr_t(select_status::unsat),
                                        std::memory_order_release);
    }
    /// True once our own statement was won elsewhere during the handshake.
    bool self_lost() const noexcept { return self_lost_; }

    /// Walks `q` from the front: drops partners whose statement was won
    /// elsewhere, skips nodes of our own exclusive statement, and unlinks
    /// and returns the first partner won for us (nullptr if none, or if we
    /// lost ourselves meanwhile). Caller holds the queue's lock and has
    /// called begin().
    select_node* claim_front(node_queue& q) noexcept {
        select_node* n = q.front();
        while (n) {
            select_node* next = node_queue::next_of(*n);
            if (self_ && n->status_word() == self_->status_word()) {
                n = next;  // our own clause: a selector cannot meet itself
                continue;
            }
            if (!reserve(*n)) {
                n = next;  // its clause is leaving: it dequeues itself
                continue;
            }
            switch (claim(*n)) {
            case outcome::won:
                q.remove(*n);
                return n;  // reserved: the caller completes and detaches it
            case outcome::lost:
                q.remove(*n);  // stale: its statement finished elsewhere
                detach(*n);
                break;
            case outcome::self_lost:
                unreserve(*n);
                self_lost_ = true;
                return nullptr;
            }
            n = next;
        }
        return nullptr;
    }

private:
    enum class outcome { won, lost, self_lost };

    static std::uintptr_t won_value(select_node& n) noexcept {
        return n.is_exclusive() ? reinterpret_cast<std::uintptr_t>(&n)
                                : std::uintptr_t(select_status::sat);
    }

    outcome claim(select_node& other) noexcept {
        auto* theirs = other.status_word();
        if (!theirs) return outcome::won;  // a plain waiter: always ours
        const auto won = won_value(other);
        for (;;) {
            auto expected = std::uintptr_t(select_status::unsat);
            // acq_rel: our later element move stays after the win, and we
            // see what the waiter wrote before it queued.
            if (theirs->compare_exchange_strong(expected, won, std::memory_order_acq_rel))
                return outcome::won;
            if (expected != std::uintptr_t(select_status::pending)) return outcome::lost;
            // The other side is mid-handshake. Without a pending status of
            // our own, or with the lower address, we just wait it out.
            if (!self_ || reinterpret_cast<std::uintptr_t>(self_->status_word()) <
                              reinterpret_cast<std::uintptr_t>(theirs)) {
                cpu_relax();
                continue;
            }
            // Symmetric case and we have the higher address: step back so
            // the other side can claim us, until its handshake ends.
            auto* mine = self_->status_word();
            mine->store(std::uintptr_t(select_status::unsat), std::memory_order_release);
            while (theirs->load(std::memory_order_acquire) ==
                       std::uintptr_t(select_status::pending) &&
                   mine->load(std::memory_order_acquire) == std::uintptr_t(select_status::unsat))
                cpu_relax();
            auto unsat = std::uintptr_t(select_status::unsat);
            if (!mine->compare_exchange_strong(unsat, std::uintptr_t(select_status::pending),
                                               std::memory_order_acq_rel))
                return outcome::self_lost;  // the other side (or anyone) won us
        }
    }

    select_node* self_;
    bool self_lost_ = false;
};

/// Checked builds: reports a park() that ended without the wake it waited
/// for (a stray unpark), naming the operation; the caller parks again.
inline void report_stray_wake(const char* operation, const char* name, const void* ch) {
    if constexpr (checked_build)
        report_misuse("stray wake: a thread blocked in " + std::string(operation) + " on " +
                      describe("channel", name, ch) +
                      " was unparked before its partner completed it (troupe::unpark on a "
                      "blocked thread?); it waits again");
}

/// Waits for a partner to complete `w` (or for close), then consumes the one
/// unpark the partner owes us. A short yield (user thread) or spin (OS
/// thread) phase first: if the partner finishes meanwhile, its unpark merely
/// banks a permit and the park below returns at once. A park that returns
/// before the partner released our node `self` (a stray unpark) parks again:
/// the partner's unpark is still owed, and our node must outlive its touch.
inline void await_partner(const channel_waiter& w, const select_node& self, const char* operation,
                          const char* name, const void* ch, const wait_describer* d) noexcept {
    // Recorded for dumps (troupe/dump.hpp) for the whole wait.
    wait_scope rec(operation[0] == 'i' ? "channel insert" : "channel remove", name, ch, d);
    auto pending = [&] { return w.state.load(std::memory_order_acquire) == handoff::waiting; };
    if (this_context().is_user_thread()) {
        for (int i = 0; i < defaults::channels::channel_wait_yields && pending(); ++i) yield_now();
    } else {
        for (int s = 0; s < defaults::channels::channel_wait_os_spins && pending(); ++s)
            cpu_relax();
    }
    // The execution trace's park reason (operation is "insert" or "remove").
    trace::note_park(operation[0] == 'i' ? "channel insert" : "channel remove");
    park();  // exactly one wake is owed to us: the partner's, or close's
    while (!self.released()) {
        report_stray_wake(operation, name, ch);
        park();
    }
}

/// Whether a queued node still stands for a blocked thread (not a clause of
/// a statement that finished elsewhere).
inline bool is_live(const select_node& n) noexcept {
    auto* s = n.status_word();
    if (!s) return true;
    const auto v = s->load(std::memory_order_acquire);
    return v == std::uintptr_t(select_status::unsat) || v == std::uintptr_t(select_status::pending);
}

}  // namespace troupe::detail
