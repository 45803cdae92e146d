// An idle worker: the announce-and-recheck park, the timed sleep while a
// behaviour elsewhere may block its worker, and adoption (awake workers
// scanning the mailboxes of dozing ones). Stealing proper is steal.cpp's.
#include <chrono>

#include "executor.hpp"
#include "troupe/config.hpp"
#include "troupe/detail/idle_poll.hpp"

namespace troupe::detail {

// Before this worker sleeps (a park or a nap): what it marked in
// sent_to_napper_ goes to the nappers' shared flags, so the workers still
// awake adopt it (an exchange, as after_send_to_sleeper's).
void worker::hand_over_napper_marks() noexcept {
    for (std::size_t i = 0; i < sent_to_napper_.size(); ++i)
        if (sent_to_napper_[i]) {
            sent_to_napper_[i] = 0;
            exec.workers[i]->adoptable.exchange(true, std::memory_order_acq_rel);
        }
}

// Returns false if it gave up waiting (timed park) instead of being woken.
bool worker::park_idle() noexcept {
    idle_group& g = exec.idle_;
    hand_over_napper_marks();
    // Announce first (seq_cst RMW and word store, idle_group::announce_idle),
    // then look: a sender locks the mailbox after our look (then it sees
    // the announcement and wakes us) or before it (then we see its
    // envelope). A thief's slot CAS and its wake() form the same pattern
    // with our slot loads below.
    // Before the announcement (whose seq_cst stores release it): a worker
    // that reads our sleep word as asleep reads this as set until we clear
    // it below (after_send_to_sleeper relies on that).
    dozing.store(true, std::memory_order_relaxed);
    g.announce_idle(idle_);
    bool work = false;
    for (std::size_t s = slot_begin; s < slot_end && !work; ++s) {
        mailbox* mb = exec.slots[s].load(std::memory_order_seq_cst);
        mb->lock.lock();
        work = !mb->queue->empty();
        mb->lock.unlock();
    }
    // User-thread workers: also look at the mailboxes of workers blocked in
    // a behaviour (the Dekker pair with block_in_behaviour and wake_owner):
    // nobody else would take them.
    std::size_t victim = victim_selector::none;
    if (!work && exec.user_threads && exec.stealing) victim = blocked_victim_with_work();
    // An external send may have left work in a sleeper's range to us
    // (executor::looker_takes_over): adopt it before sleeping.
    if (!work && !exec.user_threads && exec.stealing) work = left_to_adopt();
    bool woken = true;
    if (!work && victim == victim_selector::none) {
        exec.notify_if_done();  // the announcement's RMW ordered our counts before this
        if (!exec.shutdown.load(std::memory_order_seq_cst)) {
            count(stats.parks);
            // Once we sleep, we adopt nobody's range: a napper gets up (the
            // Dekker pair with nap(): our announcement, then this load).
            for (auto& w : exec.workers)
                if (w.get() != this && w->napping.load(std::memory_order_seq_cst))
                    (void)exec.wake(w->index);
            idle_sleeping();  // the idle pollers' last word before we stop polling
            // (A user-thread worker parks its user thread in either call,
            // idle_group::bind_context.)
            if (exec.stealing && another_in_batch()) {
                // A behaviour elsewhere may be blocking its worker with work
                // queued behind it that only a thief can take: do not sleep
                // for good, come back to look (one wake-up per period). When
                // the period ends with nothing a thief could take, sleep on
                // without withdrawing: we are still announced (the word still
                // asleep: no waker came), so every sender and thief still
                // finds us asleep and wakes us or takes the work over, as
                // during the first period. Withdrawing would make us scan our
                // range, and take back a hand-off chain an awake worker is
                // running through it (adoption), splitting it over two cores.
                // (A user-thread worker's timer wakes it through the word, so
                // it is not asleep any more and withdraws.)
                do {
                    woken = g.sleep_until(idle_, std::chrono::steady_clock::now() +
                                                     defaults::actors::busy_park_period);
                } while (!woken && g.asleep(idle_) &&
                         !exec.shutdown.load(std::memory_order_seq_cst) && !stealable_work());
            } else {
                g.sleep(idle_);  // until a sender, thief, helper wake or shutdown wakes us
            }
        }
    }
    g.withdraw(idle_);  // plain wakes only: we hold no spinner count after it
    // From here we scan our own range again (adopters may still gulp from
    // it for a while: harmless, see adopt_dozing).
    dozing.store(false, std::memory_order_relaxed);
    adoptable.store(false, std::memory_order_relaxed);  // we scan our range ourselves now
    if (victim != victim_selector::none) (void)steal_from(victim);
    return woken;
}

// After park_idle's announcement: some worker still asleep (not woken
// since), not napping, has its `adoptable` flag set (seq_cst loads). The
// Dekker pair with executor::looker_takes_over (the sender's seq_cst
// exchange of the flag, then its seq_cst load of our sleep word): either
// the sender read us asleep and woke the owner, or we read the flag here
// and stay awake to adopt. An owner woken since scans its own range (the
// flag stays set until it clears it: `dozing` would still read set, and
// we would take its chain from it). A napper's flag is not ours to honour:
// park_idle wakes nappers. A stale set flag costs one more idle period
// (adopt_dozing clears it).
bool worker::left_to_adopt() noexcept {
    for (auto& w : exec.workers)
        if (w.get() != this && w->adoptable.load(std::memory_order_seq_cst) &&
            exec.idle_.asleep(w->idle_member()) && !w->napping.load(std::memory_order_seq_cst))
            return true;
    return false;
}

// Whether a steal attempt could take something now, by steal_from's rule:
// an awake worker (not dozing: a dozing one's mailboxes are adopted) has
// two or more waiting mailboxes outside batches, or one while its batch has
// run long or it is blocked in a behaviour. Relaxed loads: a guess, read by
// a timed sleeper deciding whether to get up.
bool worker::stealable_work() const noexcept {
    const std::uint64_t now = timestamp();
    for (const auto& w : exec.workers) {
        if (w.get() == this || w->dozing.load(std::memory_order_relaxed)) continue;
        const unsigned waiting = waiting_in_range(*w);
        if (waiting >= 2) return true;
        if (waiting == 0) continue;
        if (exec.user_threads && w->blocked.load(std::memory_order_relaxed)) return true;
        const std::uint64_t began = w->batch_began.load(std::memory_order_relaxed);
        if (began != 0 && now - began > defaults::actors::long_batch_ticks) return true;
    }
    return false;
}

// User-thread workers, after announcing: the first worker blocked in a
// behaviour (seq_cst load of its flag) with a non-empty mailbox outside its
// batch (checked under the mailbox's lock), else victim_selector::none.
// With block_in_behaviour (flag store, then the sleepers load) and a
// sender (append under the lock, sleepers load, then the flag load in
// wake_owner): either we see the work here, or the blocker or the sender
// sees our announcement and wakes a parked worker.
std::size_t worker::blocked_victim_with_work() noexcept {
    for (auto& w : exec.workers) {
        if (w.get() == this || !w->blocked.load(std::memory_order_seq_cst)) continue;
        for (std::size_t s = w->slot_begin; s < w->slot_end; ++s) {
            mailbox* mb = exec.slots[s].load(std::memory_order_seq_cst);
            if (!mb) continue;  // mid-swap by a thief, who is awake
            mb->lock.lock();
            const bool work =
                !mb->queue->empty() && !mb->being_processed.load(std::memory_order_relaxed);
            mb->lock.unlock();
            if (work) return w->index;
        }
    }
    return victim_selector::none;
}

// Called by park_idle after its announcement (a seq_cst RMW of the group's
// sleeper count). Dekker pair with flush_before_blocking (a blocking
// behaviour's worker: batch_began stored, full fence, seq_cst load of that
// count, any_parked): either that worker sees
// our announcement and wakes us, or this seq_cst load sees its batch and we
// park with a timeout. Either way no work stays stranded behind it.
//
// User-thread workers: a worker blocked in a behaviour does not count (its
// mailboxes were just checked by blocked_victim_with_work, under the Dekker
// pair with block_in_behaviour); one whose behaviour computes (or waits
// without a troupe primitive) still does.
bool worker::another_in_batch() const noexcept {
    for (auto& w : exec.workers) {
        if (w.get() == this || w->batch_began.load(std::memory_order_seq_cst) == 0) continue;
        if (exec.user_threads && w->blocked.load(std::memory_order_seq_cst)) continue;
        return true;
    }
    return false;
}

// Scans the ranges of dozing workers (asleep, or woken and not yet
// running) as if they were ours: the awake worker gets to the work first.
// This is stealing without the swap: the mailboxes stay in their owner's
// range, so when it wakes it scans them again. One worker per actor and
// FIFO still hold, because they never depended on who scans a mailbox:
// whoever gulps it sets being_processed under its lock, and nobody gulps
// it again until that batch is processed and the flag cleared (release,
// read with acquire by the next gulp, which may be the owner's). A stale
// or null slot (a thief mid-swap) is harmless for the same reason.
// relaxed `dozing` loads: a hint, except for a mailbox whose wake we took
// over (settle_deferred_wake).
unsigned worker::adopt_dozing() {
    unsigned busy = 0;
    for (const auto& w : exec.workers) {
        if (w.get() == this || !w->dozing.load(std::memory_order_relaxed)) continue;
        // Only if somebody sent to its range since it was last scanned
        // (relaxed test first, then the acquire exchange that sees the
        // senders' appends): an idle range costs one load per pass.
        // Or if we sent to it while it napped (our own appends: program
        // order and the mailbox locks make them visible to our scan).
        const bool ours = nap_eligible_ && sent_to_napper_[w->index];
        if (ours) sent_to_napper_[w->index] = 0;
        if (!(w->adoptable.load(std::memory_order_relaxed) &&
              w->adoptable.exchange(false, std::memory_order_acq_rel)) &&
            !ours)
            continue;
        bool left = false;
        // Work piling up in a sleeper's range (more than one waiting
        // mailbox: external sends came faster than we take them, or in a
        // burst) is parallel work: wake its owner to share it, before we
        // run the first batch (executor::looker_takes_over left it to us).
        // Not a napper: its own look decides when its pattern ended.
        if (!w->napping.load(std::memory_order_relaxed) && waiting_in_range(*w) > 1)
            (void)exec.wake(w->index);
        for (std::size_t s = w->slot_begin; s < w->slot_end; ++s) {
            // acquire: as for our own slots (a thief's swap may put a
            // mailbox here).
            mailbox* mb = exec.slots[s].load(std::memory_order_acquire);
            if (!mb || mb->pending.load(std::memory_order_relaxed) == 0) continue;
            if (take(*mb)) {
                count(stats.adopted);
                ++busy;
            } else {
                left = true;  // in another worker's batch: look again later
            }
        }
        // A waiting mailbox we could not take (its batch holder will not
        // come back for it): keep the range flagged, so this or another
        // adopter scans it again, as an unconditional scan would.
        if (left) w->adoptable.exchange(true, std::memory_order_acq_rel);
    }
    return busy;
}

// Mailboxes of w's range with envelopes waiting and not in a batch (only
// those can be taken by another worker), counted up to 2 (relaxed loads: a
// hint; acquire slot loads as for our own slots).
unsigned worker::waiting_in_range(const worker& w) const noexcept {
    unsigned n = 0;
    for (std::size_t s = w.slot_begin; s < w.slot_end && n < 2; ++s) {
        const mailbox* mb = exec.slots[s].load(std::memory_order_acquire);
        if (mb && mb->pending.load(std::memory_order_relaxed) != 0 &&
            !mb->being_processed.load(std::memory_order_relaxed))
            ++n;
    }
    return n;
}

void worker::maybe_wake_helper(bool nappers_too) noexcept {
    // Somebody is parked while nobody is looking for work: let one parked
    // worker try to steal.
    if (!exec.any_parked()) return;
    if (exec.any_spinning()) return;
    if (!nappers_too && !parked_not_napping()) return;
    exec.wake_helper(index);
}

// Whether another worker is announced asleep without napping (relaxed
// napping loads: a hint for a helper wake).
bool worker::parked_not_napping() const noexcept {
    for (const auto& w : exec.workers)
        if (w.get() != this && !w->napping.load(std::memory_order_relaxed) &&
            exec.idle_.asleep(w->idle_member()))
            return true;
    return false;
}

// Napping. A worker whose batches are short and hand most of what they
// send to mailboxes of other workers' ranges (a hand-off chain or a
// server and its clients whose actors straddle two ranges: Savina's
// philosopher, concdict, chameneos, logmap) gains nothing from its core:
// every step crosses cores, moving the mailbox, the actor and the message
// between caches (100-200 ns a step here, against 40-60 ns for the whole
// step on one core), and the two workers' appends and gulps contend on the
// same mailbox locks. Parking would not happen: work keeps arriving. So
// such a worker naps: it announces itself idle (dozing, as for a park) for
// a bounded time, during which senders do not wake it and the awake
// workers run its mailboxes as their own (adopt_dozing), and the pattern
// runs on one core. After the nap it looks again over a shorter window;
// a pattern that persists naps again for twice as long (up to
// nap_first << nap_doublings), one that changed resets the period.
//
// Why nothing waits long: a napper's range is adopted while some other
// worker is awake, and a worker that parks wakes every napper first (the
// Dekker pair below); real parallel work wakes it as it wakes a parked
// worker (the helper wake of a batch that runs long, a thief's victim
// wake, an external send; not a big gulp's helper wake: see take()).
// Beyond that, the nap is bounded: its own timer ends it.
// The worst case is one period of lost parallelism, never a lost envelope.
void worker::look_at_crossings() noexcept {
    if (should_nap()) nap();
    else nap_level_ = 0;
    win_msgs_ = win_gulps_ = win_cross_ = 0;
    win_began_ = timestamp();
    nap_look_at_ = nap_level_ ? defaults::actors::nap_window_after : defaults::actors::nap_window;
}

bool worker::should_nap() const noexcept {
    // Many sends crossed (a third: where actors talk to random others, as
    // in Savina's big, about half cross, and a window often reads under
    // half), and the batches were short in messages and in time (a long
    // batch, or messages that each compute for a while, are work a core
    // is needed for).
    if (win_cross_ * 3 < win_msgs_ ||
        win_msgs_ >= defaults::actors::nap_max_batch_average * win_gulps_)
        return false;
    // By the clock, so time the kernel gave other threads counts as slow
    // work (the thread's CPU time is a system call, 3 µs on a
    // paravirtualised VM). Only a first look (nap_window deliveries,
    // milliseconds of budget) is judged by it: the short look after a nap
    // (nap_window_after deliveries) would fail at any preemption and end
    // napping on a loaded machine (docs/actors.md, "Napping").
    if (nap_level_ == 0 &&
        timestamp() - win_began_ >= defaults::actors::nap_max_ticks_per_message * win_msgs_)
        return false;
    // Someone else is awake to adopt our range (a hint here; nap() checks
    // again after its announcement).
    for (const auto& w : exec.workers)
        if (w.get() != this && !w->dozing.load(std::memory_order_relaxed)) return true;
    return false;
}

void worker::nap() noexcept {
    idle_group& g = exec.idle_;
    hand_over_napper_marks();
    // As in park_idle: dozing before the announcement.
    dozing.store(true, std::memory_order_relaxed);
    g.stop_spinning(idle_);
    g.announce_idle(idle_);
    // After the announcement: a worker that parks and reads `napping` set
    // finds us announced, so its wake reaches us. Dekker pair with
    // park_idle (its announcement, then its seq_cst load of `napping`):
    // either it sees us napping and wakes us, or we see it announced below
    // and do not nap.
    napping.store(true, std::memory_order_seq_cst);
    bool adopter = false;
    for (const auto& w : exec.workers)
        if (w.get() != this && !g.asleep(w->idle_member())) adopter = true;
    if (adopter && !exec.shutdown.load(std::memory_order_seq_cst)) {
        // What waits in our range now is the adopters' to take (an
        // exchange, as a sender's: they see our range's appends).
        adoptable.exchange(true, std::memory_order_acq_rel);
        count(stats.naps);
        const auto period = defaults::actors::nap_first * (1u << nap_level_);
        if (nap_level_ < defaults::actors::nap_doublings) ++nap_level_;
        idle_sleeping();  // as park_idle: the idle pollers hear we stop polling
        (void)g.sleep_until(idle_, std::chrono::steady_clock::now() + period);
    }
    napping.store(false, std::memory_order_seq_cst);
    g.withdraw(idle_);
    dozing.store(false, std::memory_order_relaxed);
    adoptable.store(false, std::memory_order_relaxed);  // we scan our range ourselves now
}

}  // namespace troupe::detail
