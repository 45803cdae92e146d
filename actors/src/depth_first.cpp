// Depth-first order for actors created in a batch (docs/actors.md,
// "Depth-first order"). A worker runs a gulped batch in order, but a
// message that a behaviour sends to an actor created in the same batch
// runs next, before the rest of the batch (a stack: the latest delivery's
// sends first, each delivery's in send order). A tree of actors (Savina's
// fib and quicksort) then unfolds depth first and holds one path of it,
// as under CAF's LIFO worker, instead of a whole level.
//
// Why one actor still runs on one worker at a time: a new actor goes to a
// mailbox of this worker's range (next_ticket), which this batch holds
// (being_processed set under its lock, as a gulp does: "claimed") until it
// releases it, and every message on the stack is delivered or handed to its
// mailbox before that release. Why FIFO per sender holds: an actor gets
// stack deliveries only from its creation on, while its stamp is the
// batch's; a send to it while one of its messages from an earlier
// delivery still waits on the stack ends its stamp (it is "demoted": that
// send and all later ones go the usual way, through the stages, which reach
// its mailbox after every stack message was delivered or handed over).
// Sends of one delivery to one actor share a group and keep their order.
#include <algorithm>
#include <limits>

#include "executor.hpp"
#include "troupe/config.hpp"

namespace troupe::detail {

std::size_t worker::ticket_for_new(actor& a) noexcept {
    const std::size_t t = next_ticket();
    // Only inside a batch (not an idle poller's callback), and only until
    // the order has ended for this batch.
    if (batch_ == nullptr || depth_stamp_ == depth_over) return t;
    if (depth_stamp_ == 0) {
        // The count in the high bits, the worker in the low 16: no two
        // batches of one executor share a stamp (the stack also checks the
        // receiver's executor).
        depth_stamp_ = (++depth_batches_ << 16) | (index & 0xffff);
        depth_left_ = defaults::actors::depth_first_budget;
    }
    mailbox& m = exec.mailboxes[t];
    if (&m != batch_ && claim_stamp_[t] != depth_stamp_) {
        // Held by another worker's batch: this actor takes no stack
        // deliveries (its messages go the usual way).
        if (!claim(m)) return t;
        claim_stamp_[t] = depth_stamp_;
    }
    worker_access::set_born(a, depth_stamp_);
    return t;
}

// Holds m for this batch, as a gulp does without taking its queue: under
// its lock, unless another worker's batch holds it. acquire: as gulp (we
// see what the previous batch of m did to its actors and registry).
bool worker::claim(mailbox& m) noexcept {
    m.lock.lock();
    if (m.being_processed.load(std::memory_order_acquire)) {
        m.lock.unlock();
        return false;
    }
    // Invariant (as gulp's): being_processed <=> a worker holds m's actors.
    m.being_processed.store(true, std::memory_order_relaxed);
    m.lock.unlock();
    claims_.push_back(&m);  // reserved: at most our range's size
    return true;
}

// Gives back every claimed mailbox but `keep` (the mailbox of an actor
// whose behaviour runs now). Callers flushed the stages and emptied the
// stack first. release: publishes what the behaviours did to the next
// gulper of each (its acquire under the lock), as process() does.
void worker::release_claims(mailbox* keep) noexcept {
    bool kept = false;
    for (mailbox* m : claims_) {
        if (m == keep) {
            kept = true;
            continue;
        }
        m->being_processed.store(false, std::memory_order_release);
    }
    claims_.clear();
    if (kept) claims_.push_back(keep);
}

bool worker::push_depth_first(const envelope& e) {
    actor& r = *e.receiver;
    if (worker_access::born(r) != depth_stamp_ || worker_access::box(r)->exec != &exec)
        return false;
    std::uint16_t& n = worker_access::stacked(r);
    std::uint32_t& group = worker_access::stacked_group(r);
    if (n != 0 && (group != depth_serial_ || n == std::numeric_limits<std::uint16_t>::max())) {
        // Its earlier message still waits in an older group, below the one
        // this send would join: this one must not overtake it.
        worker_access::set_born(r, 0);
        return false;
    }
    depth_stack_.push_back(e);  // strong: on a throw nothing was queued or counted
    ++n;
    group = depth_serial_;
    if (!from_stack_ && !batch_held_) {
        // The first push of a delivery from the batch: set the rest of the
        // batch aside, so process()'s loop ends after this delivery and runs
        // the stack (run_depth_first). The delivery's later self-sends go
        // through the stages meanwhile (they would run before that rest).
        std::swap(local_, spare_);
        batch_held_ = true;
        held_budget_ = local_budget_;
        local_budget_ = 0;
    }
    return true;
}

// Whether another worker has nothing to do: outside a batch (its stamp 0)
// and parked, or with no waiting mailbox in its range (a worker between
// two batches of its own work is not idle: handing it ours would only cut
// our depth-first run short). Relaxed loads, a guess: a wrong one costs a
// hand-out too many (breadth first for a moment) or a worker idle a little
// longer (until it steals from us as from any worker in a long batch).
// The range is read only while the worker is outside a batch.
bool worker::another_idle() const noexcept {
    for (const auto& w : exec.workers) {
        if (w.get() == this || w->batch_began.load(std::memory_order_relaxed) != 0) continue;
        if (w->dozing.load(std::memory_order_relaxed)) return true;
        bool waiting = false;
        for (std::size_t s = w->slot_begin; s < w->slot_end && !waiting; ++s) {
            const mailbox* mb = exec.slots[s].load(std::memory_order_relaxed);
            waiting = mb && mb->pending.load(std::memory_order_relaxed) != 0;
        }
        if (!waiting) return true;
    }
    return false;
}

// At most one hand-out to an idle worker per long_batch_ticks: the worker
// it feeds needs that long to wake, steal and start; meanwhile it still
// reads as idle, and handing the stack out again at every delivery would
// unfold the tree breadth first (fib at 2 workers: 12.3 MiB median peak
// without this, CAF 6.2).
bool worker::handout_due() noexcept {
    const std::uint64_t now = timestamp();
    if (now - last_handout_ < defaults::actors::long_batch_ticks) return false;
    last_handout_ = now;
    return true;
}

// The delivery that just ran (or is about to block) pushed its sends in
// send order: turn them over, so the first of them is on top (runs first),
// and close the group (a second call does nothing).
void worker::reverse_depth_group() noexcept {
    if (depth_stack_.size() - depth_group_base_ > 1)
        std::reverse(depth_stack_.begin() + static_cast<std::ptrdiff_t>(depth_group_base_),
                     depth_stack_.end());
    depth_group_base_ = depth_stack_.size();
}

// Ends the order for this batch: every message on the stack goes to its
// receiver's mailbox (from the top: each receiver's in order), then the
// stages (later sends, so after them), then the claimed mailboxes are
// given back, but the one of a behaviour running off the stack now (a
// behaviour about to block). Later creations and sends of this batch go
// the usual way.
void worker::spill_depth_first() {
    if (depth_stamp_ == 0 || depth_stamp_ == depth_over) return;
    depth_stamp_ = depth_over;
    // A behaviour blocking mid-delivery: its own group is still open.
    reverse_depth_group();
    while (!depth_stack_.empty()) {
        const envelope e = depth_stack_.back();
#if defined(TROUPE_CHECKED)
        if (!check_delivery(e)) {  // ended meanwhile (reported): dropped
            depth_stack_.pop_back();
            worker_access::note_unqueued(*e.msg);
            e.fn(nullptr, *e.msg);
            continue;
        }
#endif
        worker_access::stacked(*e.receiver) = 0;
        // On a throw (no memory for the mailbox's queue) e stays on the stack.
        deliver_to_mailbox(*worker_access::box(*e.receiver), &e, 1);
        depth_stack_.pop_back();
    }
    depth_group_base_ = 0;
    flush_stages();
    mailbox* const running_box = from_stack_ ? worker_access::box(*running_) : nullptr;
    if (running_box != nullptr && running_box != batch_) give_back_batch(running_box);
    release_claims(running_box);
}

// The rest of the batch goes back to the front of its mailbox (it was
// gulped before anything queued there since: FIFO holds) and the mailbox is
// released: the batch ends after the delivery in process, and its actors
// may run anywhere again. Callers flushed the stages. Two uses:
// - the depth-first order ended between two deliveries (running_box null):
//   the rest would otherwise run with that order off, its new actors'
//   messages waiting for the batch's end (breadth first again); regulped,
//   it starts a new batch with the order on, or another worker takes it;
// - a behaviour running off the stack is about to block (running_box: its
//   actor's claimed mailbox, not the batch's, whose actors have no
//   behaviour running now): another worker may then run them (what the
//   blocked behaviour waits for may be one of them, as it could when the
//   new actor ran in a batch of its own). The batch goes on as one of the
//   running actor's mailbox, which stays claimed to its end.
// Without memory for the merged queue, the batch stays whole.
void worker::give_back_batch(mailbox* running_box) noexcept {
    mailbox& x = *batch_;
    x.lock.lock();
    try {
        if (!x.queue->empty()) local_->append(x.queue->front(), x.queue->size());
    } catch (...) {
        x.lock.unlock();
        return;
    }
    std::swap(x.queue, local_);
    local_->clear();
    // Invariant: pending == queue->size() whenever the lock is free.
    x.pending.store(x.queue->size(), std::memory_order_relaxed);
    // release: publishes what this batch did to x's actors to their next
    // gulper (as process() does at a batch's end).
    x.being_processed.store(false, std::memory_order_release);
    x.lock.unlock();
    batch_given_back_ = true;
    if (running_box != nullptr) batch_ = running_box;
}

}  // namespace troupe::detail
