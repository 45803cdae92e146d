#pragma once
// A mailbox: one of the executor's M message queues (see docs/actors.md).
// Exposed only because the inline send path needs it.
#include <atomic>
#include <cstdint>

#include "troupe/detail/copy_queue.hpp"
#include "troupe/detail/idle_group.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::detail {

class executor;

struct alignas(64) mailbox {
    // Guards `queue`.
    spinlock lock{"actor mailbox"};
    // The copy queue accepting sends (a gulp swaps it with the worker's
    // empty one).
    copy_queue* queue = nullptr;
    // == queue->size(); stored under `lock`, read anywhere as a hint (the
    // test in test-and-gulp, thieves' candidate checks).
    std::atomic<std::uint32_t> pending{0};
    // Set (under `lock`) by the gulp that takes a non-empty batch, cleared
    // (release) when the batch is processed. While set nobody else gulps:
    // this is what keeps one actor on one worker at a time.
    std::atomic<bool> being_processed{false};
    // The worker whose slot range holds this mailbox (a hint for waking;
    // see the wake protocol in docs/actors.md).
    std::atomic<std::uint32_t> owner{0};
    // The executor's workers as an idle group: a send asks it, under
    // `lock`, whether any worker is parked.
    const idle_group* idle = nullptr;
    executor* exec = nullptr;
    // Registry of live actors that have received a message (for the
    // survivor report of a timed stop; types are named from it): linked at
    // their first delivery,
    // unlinked when they end; touched only by the worker holding
    // `being_processed` (so no lock).
    actor* settled = nullptr;
    std::uint32_t index = 0;
};

/// Runs `append(*mb.queue)` under `mb`'s lock, keeping the invariant
/// pending == queue->size() whenever the lock is free. Strong if `append`
/// is: a failed growth appends nothing and rethrows (the lock released).
/// Returns whether some worker was parked, read under the lock: a worker
/// that parks announces itself (idle_group::announce_idle), then checks its
/// mailboxes under their locks, so either it sees these envelopes or we see
/// its announcement; on true the caller wakes one after this returns.
template <class Append>
inline bool append_locked_and_check_with(mailbox& mb, Append&& append) {
    mb.lock.lock();
    try {
        append(*mb.queue);
    } catch (...) {
        mb.lock.unlock();
        throw;
    }
    mb.pending.store(mb.queue->size(), std::memory_order_relaxed);
    const bool wake = mb.idle->any_sleeping();
    mb.lock.unlock();
    return wake;
}

/// Appends `e[0..n)` to `mb`'s queue (append_locked_and_check_with).
inline bool append_locked_and_check(mailbox& mb, const envelope* e, std::uint32_t n) {
    return append_locked_and_check_with(mb, [e, n](copy_queue& q) {
        if (n == 1) q.push(*e);
        else q.append(e, n);
    });
}

/// The same for a worker's staging queue holding envelopes for `mb` (the
/// end-of-batch flush): when `mb`'s queue is empty and too small to take
/// them without growing, the two queues exchange arrays instead (FIFO
/// holds: there was nothing before them). So a burst travels from stage to
/// mailbox to gulping worker in one array, rather than being copied into
/// a second array that grows to the burst's size as well. `staged` is left
/// holding the mailbox's old array (empty, or unchanged on a throw).
inline bool append_locked_and_check(mailbox& mb, copy_queue& staged) {
    return append_locked_and_check_with(mb, [&staged](copy_queue& q) {
        if (q.empty() && staged.size() > q.capacity()) q.swap(staged);
        else q.append(staged.front(), staged.size());
    });
}

}  // namespace troupe::detail
