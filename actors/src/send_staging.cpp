// The send half of a worker: a behaviour's sends go through a short
// pipeline into per-mailbox stages, and are handed to their mailboxes (one
// lock per mailbox) when the batch ends, early in a long batch, or before a
// behaviour blocks; a send that finds the receiver's owner asleep wakes it
// or, at the end of a batch, may take the work over (the deferred wake).
// send_from_behaviour, the inline first step, is in executor.hpp.
#include <utility>

#include "executor.hpp"
#include "troupe/config.hpp"

namespace troupe::detail {

// Hands n envelopes (in order) to mailbox d under one lock acquisition.
void worker::deliver_to_mailbox(mailbox& d, const envelope* e, std::uint32_t n) {
    // The parking handshake is append_locked_and_check's (mailbox.hpp).
    if (append_locked_and_check(d, e, n)) [[unlikely]]
        after_send_to_sleeper(d);
}

// A send to d saw (under d's lock, after appending) that some worker is
// announced idle. Normally: wake d's owner if it is the one parked. At the
// end of a batch (may_defer_wake_), the first mailbox whose owner is asleep
// keeps its envelopes without a wake for now: settle_deferred_wake decides,
// once the whole flush is done, whether this worker takes the work itself.
void worker::after_send_to_sleeper(mailbox& d) noexcept {
    if (d.exec == &exec) {
        const std::size_t o = d.owner.load(std::memory_order_acquire);
        // Our own mailbox: we are awake and scan it before we could park
        // (the hint is stale only inside a thief's swap, and the thief is
        // awake and scans what it took). Waking ourselves would cost a
        // look at our own sleep word on every send while another worker
        // is parked.
        if (o == index) return;
        worker& owner = *exec.workers[o];
        // A napping owner is not woken: the awake workers adopt its range
        // (parking.cpp, "Napping"), and its nap is bounded. seq_cst: read
        // after our sleepers check saw its announcement, so a napper that
        // has since withdrawn reads as not napping here (it cleared the
        // flag before withdrawing) and is woken below if it parks again.
        // We are one of those awake workers: our next pass adopts the
        // range (sent_to_napper_), whatever the others do. If the napper
        // withdraws first, it scans its range itself.
        if (owner.napping.load(std::memory_order_seq_cst)) {
            sent_to_napper_[o] = 1;
            return;
        }
        // An adopter that takes the flag (acquire) sees our append (an
        // exchange: it continues the release sequence of other setters).
        owner.adoptable.exchange(true, std::memory_order_acq_rel);
        // seq_cst load of o's sleep word: announced asleep and not yet
        // woken by anyone. Its `dozing` store came before that
        // announcement, so from here on we read dozing == true until o
        // withdraws (the guarantee settle_deferred_wake needs).
        if (may_defer_wake_ && deferred_ == nullptr && exec.idle_.asleep(owner.idle_member())) {
            deferred_ = &d;
            return;
        }
    }
    wake_owner(d);
}

// The end of a batch deferred the wake of m's owner (asleep when we
// appended). If this worker is about to run dry, it takes the work itself,
// as a thread woken by another runs next on the waker's processor
// (core's placement rule, Go's runnext): the owner stays asleep and the
// hand-off chain stays on this core (a futex wake plus a kernel scheduling
// round per crossing otherwise: ~1 us quiet, hundreds of us on a loaded
// machine). Otherwise there is more work than this worker: wake the owner
// to share it.
//
// Why nothing is lost when we do not wake: we are awake and our next pass
// scans the mailboxes of every worker whose `dozing` flag we read as set
// and whose `adoptable` flag we take (adopt_dozing). m's owner o was asleep
// when we appended, so we read its `dozing` as set until o withdraws (see
// after_send_to_sleeper), and we set its `adoptable` ourselves: we take it
// unless another adopter took it first (that adopter then scans o's range
// after its acquire, which sees our append, and sets the flag again if it
// cannot take m) or o cleared it on waking. Once it has withdrawn, o scans
// its own range, and it cannot park again without its re-check, which
// locks m after our append and sees the envelope. (The owner hint is
// right here: it is stale only inside a thief's swap, whose thief is awake
// and scans the mailbox it took and wakes the victim it gave one to.)
void worker::settle_deferred_wake() noexcept {
    mailbox& m = *std::exchange(deferred_, nullptr);
    // A chain running through a sleeper's range settles here at every hop
    // into that range, and the look (two dependent loads per mailbox of
    // two ranges) would cost more than the hop: a dry verdict is trusted
    // for the next dry_trust_hops settles. A wrong guess leaves the owner
    // asleep for at most that many hops of ours.
    if (dry_trust_ != 0) {
        --dry_trust_;
        count(stats.wakes_taken_over);
        return;
    }
    if (about_to_run_dry(&m)) {
        dry_trust_ = dry_trust_hops;
        count(stats.wakes_taken_over);
        return;
    }
    wake_owner(m);
}

// Whether no mailbox this worker will scan next has waiting envelopes,
// `except` aside: our own range (the batch's mailbox too: new arrivals are
// work), and the ranges of dozing workers. Relaxed loads: a guess, like a
// thief's; a wrong guess costs a wake too many or a hand-off taken over
// while the owner could have helped, never a lost envelope.
bool worker::about_to_run_dry(const mailbox* except) const noexcept {
    for (std::size_t s = slot_begin; s < slot_end; ++s) {
        const mailbox* mb = exec.slots[s].load(std::memory_order_relaxed);
        if (mb != except && mb->pending.load(std::memory_order_relaxed) != 0) return false;
    }
    for (const auto& w : exec.workers) {
        if (w.get() == this || !w->dozing.load(std::memory_order_relaxed)) continue;
        for (std::size_t s = w->slot_begin; s < w->slot_end; ++s) {
            const mailbox* mb = exec.slots[s].load(std::memory_order_relaxed);
            if (mb && mb != except && mb->pending.load(std::memory_order_relaxed) != 0)
                return false;
        }
    }
    return true;
}

// Moves one envelope from the pipeline to its mailbox's stage.
void worker::stage(const envelope& e) {
    mailbox* d = worker_access::box(*e.receiver);
    if (d->exec != &exec) [[unlikely]] {
        // Another system's actor: straight to its mailbox (still in send
        // order, since the pipeline is FIFO).
        deliver_to_mailbox(*d, &e, 1);
        return;
    }
    copy_queue& s = stages_[d->index];
    if (s.empty()) touched_.push_back(d->index);
    s.push(e);
}

// Hands every staged envelope to its mailbox, preserving send order per
// mailbox (so per sender and receiver), one lock per mailbox.
void worker::flush_stages() {
    // The common case of a batch that sent one message: no staging copy.
    // (Nothing staged before it, so it is the only message in flight from
    // this batch and cannot overtake another.)
    if (pipe_count_ == 1 && touched_.empty()) {
        const envelope& e = pipeline_[(pipe_head_ + pipeline_size - 1) % pipeline_size];
        mailbox* d = worker_access::box(*e.receiver);
        // Sends that cross, for napping (parking.cpp): relaxed, a hint.
        if (nap_eligible_ && d->owner.load(std::memory_order_relaxed) != index) ++win_cross_;
#if defined(TROUPE_STATISTICS)
        if (d->exec == &exec && d->owner.load(std::memory_order_relaxed) != index)
            count(stats.crossed, 1);
#endif
        deliver_to_mailbox(*d, &e, 1);  // strong: on a throw it stays in the pipeline
        pipe_count_ = 0;
        return;
    }
    // A flush of more than one message (a fan-out, a burst) is work to
    // share: the next deferred wake looks again (settle_deferred_wake's
    // trust ends).
    dry_trust_ = 0;
    // One entry at a time: stage() is strong, so if it throws (a growth
    // failed) the entries staged so far have left the pipeline and the
    // rest are still in it, in order: nothing is staged twice.
    for (; pipe_count_ > 0; --pipe_count_)
        stage(pipeline_[(pipe_head_ + pipeline_size - pipe_count_) % pipeline_size]);
    for (std::uint32_t idx : touched_) {
        copy_queue& s = stages_[idx];
        const std::uint32_t n = s.size();
        // Sends that cross, for napping and in statistics builds (relaxed:
        // a hint, the owner as of now); a system where nobody naps reads
        // no owner here, as in the single-send path above.
        if (nap_eligible_ && exec.mailboxes[idx].owner.load(std::memory_order_relaxed) != index)
            win_cross_ += n;
#if defined(TROUPE_STATISTICS)
        if (exec.mailboxes[idx].owner.load(std::memory_order_relaxed) != index)
            count(stats.crossed, n);
#endif
        // May exchange s's array with the mailbox's (a burst is not copied).
        if (append_locked_and_check(exec.mailboxes[idx], s)) [[unlikely]]
            after_send_to_sleeper(exec.mailboxes[idx]);
        s.clear();
        s.reclaim(n);
    }
    touched_.clear();
}

// Every long_batch_flush_check sends staged by a batch's behaviours
// (send_from_behaviour; a batch that sends nothing never looks at the
// clock): if long_batch_ticks
// have passed since the batch began or since the last such flush, and some
// other worker is outside a batch (idle, parked, or between two batches),
// hand the staged sends to their mailboxes now rather than at the batch's
// end, so a pipeline's next stage (sieve: the filter this one created, in
// our own range) can be taken by that worker while this batch goes on; and
// if a worker is parked and none is looking for work, wake one to take it
// (rate-limited). While every other worker is inside a batch an early flush
// would only cut the receivers' batches smaller (apsp). FIFO per sender
// holds: the flush keeps send order, and later sends of this batch are
// flushed after these.
void worker::flush_long_batch() {
    if (!exec.stealing || batch_ == nullptr) return;  // nobody else may run them / not a batch
    const std::uint64_t now = timestamp();
    if (now - last_flush_ < defaults::actors::long_batch_ticks) return;
    last_flush_ = now;
    if (!another_outside_batch()) return;
    flush_stages();  // wakes a parked owner of another range at once
    count(stats.long_batch_flushes);
    maybe_wake_helper();
}

// Whether some other worker is not inside a batch now (relaxed loads of the
// batch stamps: a hint; a stale answer costs an early flush too many or too
// few, never an envelope).
bool worker::another_outside_batch() const noexcept {
    for (const auto& w : exec.workers)
        if (w.get() != this && w->batch_began.load(std::memory_order_relaxed) == 0) return true;
    return false;
}

}  // namespace troupe::detail
