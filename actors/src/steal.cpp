// Mailbox stealing: victim choice, candidate scan and the two-CAS swap.
#include "executor.hpp"
#include "troupe/detail/trace.hpp"

namespace troupe::detail {

// One lazy steal attempt: pick a victim, scan its range once from a random
// start, try one swap at the first candidate, return either way. The stolen
// mailbox is gulped by our normal scan (it is now in our range).
bool worker::try_steal() noexcept {
    count(stats.steal_attempts);
    // relaxed: a heuristic input for longest-victim thieves.
    exec.stamps[index].store(timestamp(), std::memory_order_relaxed);
    const std::size_t v = victims_->choose();
    if (v == victim_selector::none || v == index || v >= exec.workers.size()) {
        count(stats.no_candidate);
        victims_->feedback(false);
        return false;
    }
    const bool stole = steal_from(v);
    victims_->feedback(stole);
    return stole;
}

// One scan of worker v's range and at most one swap (see try_steal).
bool worker::steal_from(std::size_t v) noexcept {
    const worker& victim = *exec.workers[v];
    const std::size_t range = victim.slot_end - victim.slot_begin;
    const std::size_t start = rng_.below(range);
    // Scan the victim's range once (unlocked, possibly stale reads: we only
    // guess). The candidate is the first mailbox, from a random start, that
    // is non-empty and not partitioned by a gulp. It is taken only if the
    // victim has another such mailbox, or is stuck in a long batch: a thief
    // never takes a worker's only next piece of work (which would just move
    // a message chain or a ping-pong to another core and back).
    mailbox* cand = nullptr;
    std::size_t cand_slot = 0, waiting = 0;
    std::uint32_t pending = 0;
    for (std::size_t k = 0; k < range; ++k) {
        const std::size_t s = victim.slot_begin + (start + k) % range;
        mailbox* mb = exec.slots[s].load(std::memory_order_acquire);
        if (!mb) continue;  // the victim is itself mid-swap on that slot
        if (mb->being_processed.load(std::memory_order_relaxed)) continue;
        const std::uint32_t p = mb->pending.load(std::memory_order_relaxed);
        if (!p) continue;
        ++waiting;
        if (!cand) {
            cand = mb;
            cand_slot = s;
            pending = p;
        }
    }
    // A user-thread worker blocked in a behaviour runs none of its mailboxes
    // until it resumes (relaxed: a hint; park_idle's re-check is the
    // guarantee).
    bool worth_it =
        waiting >= 2 || (exec.user_threads && victim.blocked.load(std::memory_order_relaxed));
    if (cand && !worth_it) {
        // relaxed: a hint; 0 means the victim is between batches.
        const std::uint64_t began = victim.batch_began.load(std::memory_order_relaxed);
        worth_it = began != 0 && timestamp() - began > defaults::actors::long_batch_ticks;
    }
    if (cand && worth_it) {
        const std::size_t s = cand_slot;
        mailbox* given = nullptr;
        if (!try_swap(slot_to_give(), s, cand, given)) {
            count(stats.failed_swaps);
            return false;  // never retried: a lost race means someone else is balancing
        }
        count(stats.steals);
        count(stats.stolen, pending);
        if (trace::on()) [[unlikely]]
            trace::mailbox_steal(cand->index, v);
        // Ownership hints follow the swap. The stolen mailbox's owner is us:
        // we are awake and scan it before we could park, and our park check
        // locks it, which publishes this store to later senders.
        cand->owner.store(static_cast<std::uint32_t>(index), std::memory_order_seq_cst);
        // The mailbox we gave away may hold messages, or the victim may be
        // parking: set its owner under its lock (so a sender after us sees
        // the victim), then wake the victim if it is parked (Dekker pair:
        // our slot CAS, then wake()'s seq_cst load of its sleep word, vs. its
        // seq_cst announcement, then its slot loads). A victim that is awake
        // scans the given mailbox before it can park.
        given->lock.lock();
        given->owner.store(static_cast<std::uint32_t>(v), std::memory_order_relaxed);
        given->lock.unlock();
        exec.wake(v);
        return true;
    }
    count(stats.no_candidate);
    return false;
}

// The thesis's swap of slots[mine] (ours) and slots[theirs] (the victim's):
// two CAS with null as the intermediate value. Invariant: once a thief CASes
// its own slot to null, the next write to that slot is by the same thief.
bool worker::try_swap(std::size_t mine, std::size_t theirs, mailbox* vic_queue,
                      mailbox*& given) noexcept {
    std::atomic<mailbox*>& my_slot = exec.slots[mine];
    std::atomic<mailbox*>& vic_slot = exec.slots[theirs];
    // Step 1: our mailbox. Never null: only we null our own slots.
    mailbox* my_queue = my_slot.load(std::memory_order_seq_cst);
    // Step 2: the victim slot must still hold the candidate (and not be null,
    // i.e. part of another swap); no state changed yet, so just fail.
    if (vic_slot.load(std::memory_order_seq_cst) != vic_queue) return false;
    // Step 3: claim our slot by nulling it. Fails only if a thief stole this
    // slot's mailbox from us meanwhile; nothing changed, fail.
    if (!my_slot.compare_exchange_strong(my_queue, nullptr, std::memory_order_seq_cst))
        return false;
    // Step 4: put our mailbox in the victim slot if it still holds the
    // candidate (a CAS never overwrites another thief's null, since
    // vic_queue != null). On failure restore our slot: by the invariant no
    // one else wrote it.
    mailbox* expected = vic_queue;
    if (!vic_slot.compare_exchange_strong(expected, my_queue, std::memory_order_seq_cst)) {
        my_slot.store(my_queue, std::memory_order_seq_cst);
        return false;
    }
    // Step 5: the swap can no longer fail; our slot is null, so only we may
    // write it (the invariant): a plain store completes the swap.
    my_slot.store(vic_queue, std::memory_order_seq_cst);
    given = my_queue;
    return true;
}

// Which of our slots to hand over: an idle empty mailbox if we see one
// (starting at a random slot), else the random slot.
std::size_t worker::slot_to_give() noexcept {
    const std::size_t range = slot_end - slot_begin;
    const std::size_t start = rng_.below(range);
    for (std::size_t k = 0; k < range; ++k) {
        std::size_t s = slot_begin + (start + k) % range;
        mailbox* mb = exec.slots[s].load(std::memory_order_relaxed);
        if (mb->pending.load(std::memory_order_relaxed) == 0 &&
            !mb->being_processed.load(std::memory_order_relaxed))
            return s;
    }
    return slot_begin + start;
}

}  // namespace troupe::detail
