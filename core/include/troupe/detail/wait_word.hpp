#pragma once
// Internal: the one-word state behind troupe's blocking primitives
// (blocking_lock, owner_lock, semaphore, future, condition_variable).
//
// Each primitive keeps its whole synchronisation state in one atomic word:
// its own payload in the high bits (a lock's owner, a semaphore's count, a
// future's state) and two flag bits at the bottom:
//
//   W (waiters_bit)    the primitive's wait queue is non-empty;
//   L (queue_lock_bit) someone holds the wait queue (a few instructions,
//                      never across a park; future::fulfil also constructs
//                      its value under it).
//
// Fast paths (nobody waits) read or CAS the word and never touch L. Slow
// paths set L with a CAS from an L-clear value, work on the queue, and
// release L with one store that also publishes the new payload and W.
// Invariants every primitive keeps:
//   - W is set exactly when the queue is non-empty, at every moment L is
//     clear (it is recomputed by whoever releases L);
//   - while L is set, only its holder changes the word; every fast-path CAS
//     expects L clear, so it fails and falls to the slow path;
//   - a waiter's node is dequeued by the waker under L; the waiter's
//     completion condition is made true only after the waker's last touch of
//     the node (see select_node::grant), so a stray wake never frees a node
//     that is still in use.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "troupe/context.hpp"
#include "troupe/defaults/core.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/detail/wait_reason.hpp"
#include "troupe/error.hpp"
#include "troupe/select.hpp"

namespace troupe::detail {

inline constexpr std::uintptr_t waiters_bit = 1;     // W
inline constexpr std::uintptr_t queue_lock_bit = 2;  // L
inline constexpr std::uintptr_t flag_bits = waiters_bit | queue_lock_bit;
inline constexpr int payload_shift = 2;

/// Spin-then-yield for the short waits on L (and nothing else: contended
/// waits for a primitive itself go through park()).
struct queue_backoff {
    int spins = 0;
    void pause() noexcept;
};

/// Sets L on `word` (spinning while another holder has it) and returns the
/// word's value just before, L clear. acquire: the previous holder's queue
/// writes are visible.
std::uintptr_t lock_queue(std::atomic<std::uintptr_t>& word) noexcept;

/// Releases L by storing `value` (L clear). release: our queue writes and
/// payload are visible to the next holder and to fast-path readers.
inline void unlock_queue(std::atomic<std::uintptr_t>& word, std::uintptr_t value) noexcept {
    word.store(value & ~queue_lock_bit, std::memory_order_release);
}

/// A lock's release by its owner, shared by blocking_lock and
/// barging_lock: with no waiter (W clear) stores 0 and returns false, the
/// lock is free; with waiters sets L and returns true, the caller hands off
/// and clears L. Spins while someone else holds L (an enqueuer, a retry, a
/// select unregister). Release order on the freeing CAS publishes the
/// critical section; acq_rel on the L CAS also lets the caller see the
/// queue that enqueuers released.
inline bool free_or_lock_queue(std::atomic<std::uintptr_t>& word) noexcept {
    queue_backoff b;
    for (;;) {
        std::uintptr_t w = word.load(std::memory_order_relaxed);
        if (w & queue_lock_bit) {
            b.pause();
            continue;
        }
        const bool waiters = (w & waiters_bit) != 0;
        if (word.compare_exchange_weak(
                w, waiters ? (w | queue_lock_bit) : 0,
                waiters ? std::memory_order_acq_rel : std::memory_order_release,
                std::memory_order_relaxed))
            return waiters;
    }
}

/// `w`'s W bit recomputed from `q`.
inline std::uintptr_t with_waiters(std::uintptr_t w, const node_queue& q) noexcept {
    return q.empty() ? (w & ~waiters_bit) : (w | waiters_bit);
}

/// Checked builds: reports, naming the primitive, that park() returned
/// while its completion condition did not hold (a stray unpark). Release
/// builds: nothing.
void report_stray_wake(const char* kind, const char* name, const void* address);

/// Checked builds (call it under `if constexpr (checked_build)`): reports,
/// naming the primitive, that it is destroyed while `waiters` threads wait
/// on it (its W bit is set). May throw what the misuse handler throws.
void report_destroyed_with_waiters(const char* kind, const char* name, const void* address,
                                   std::size_t waiters);

/// Parks until `done()` holds, without recording the wait (the caller holds
/// a wait_scope already). A stray wake (a park() that returns with the
/// condition false) is reported in checked builds and the caller parks again.
template <class Done>
void park_until_recorded(Done&& done, const char* kind, const char* name, const void* address) {
    for (;;) {
        trace::note_park(kind);  // the execution trace's park reason
        park();
        if (done()) return;
        if constexpr (checked_build) report_stray_wake(kind, name, address);
    }
}

/// Parks until `done()` holds, recording the wait in the caller's context
/// (wait_reason.hpp) meanwhile. Every blocking primitive waits through this
/// or through park_until_recorded.
template <class Done>
void park_until(Done&& done, const char* kind, const char* name, const void* address,
                const wait_describer* d = nullptr, std::int64_t until_ns = 0) {
    wait_scope rec(kind, name, address, d, until_ns);
    park_until_recorded(done, kind, name, address);
}

/// Waiters to wake after a multi-wake (semaphore release(n), future fulfil)
/// publishes its new payload. A select node (exclusive or general mode) is
/// woken under L, because only L keeps it alive (unregister_select takes
/// L), and only once the new payload is in the word, because a waituntil
/// waiter that is awake runs the clause's body as soon as its wake is
/// counted (a future's body must see available(), a semaphore's the new
/// count). Plain nodes are granted and unparked after L is released. Two
/// ways to use it:
///  - payload known before dequeuing (future): store it with L still set,
///    then add_published(n) for each dequeued, won node (a select node is
///    woken at once), release L, grant_all();
///  - payload known only after dequeuing (semaphore: the count is what no
///    waiter took): add(n) for each, store the payload with L still set,
///    wake_selects_locked(), release L, grant_all().
class grant_list {
public:
    /// Under L, the new payload already in the word: `n` was dequeued, won
    /// (try_claim) and its operation done.
    void add_published(select_node& n) noexcept {
        ++count_;
        if (!n.is_plain()) {
            n.wake();
            return;
        }
        nodes_.push_back(n);
    }
    /// Under L, before the payload is stored: as add_published, but a
    /// select node waits for wake_selects_locked().
    void add(select_node& n) noexcept {
        ++count_;
        selects_ += n.is_plain() ? 0 : 1;
        nodes_.push_back(n);
    }
    /// How many nodes were added.
    std::size_t size() const noexcept { return count_; }
    /// Whether add() deferred a select node (else the early store can be
    /// skipped).
    bool has_selects() const noexcept { return selects_ > 0; }
    /// Under L, after the word holds the new payload: wakes every select
    /// node that add() deferred (unlinked first: wake() may be the last
    /// touch).
    void wake_selects_locked() noexcept {
        for (select_node* n = nodes_.front(); n != nullptr;) {
            select_node* const next = node_queue::next_of(*n);
            if (!n->is_plain()) {
                nodes_.remove(*n);
                n->wake();
            }
            n = next;
        }
        selects_ = 0;
    }
    /// After L is released: grants and unparks each plain node in FIFO
    /// order. The node is unlinked and its waiter read before the grant,
    /// which is the last touch of the node.
    void grant_all() noexcept {
        while (select_node* n = nodes_.pop_front()) n->grant_and_unpark();
    }

private:
    node_queue nodes_;
    std::size_t count_ = 0;
    std::size_t selects_ = 0;
};

}  // namespace troupe::detail
