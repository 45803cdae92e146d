// The worker's batch loop: its thread, the scan of its mailboxes, the gulp
// of a mailbox's queue and the processing of that batch, one delivery at a
// time (docs/actors.md, "Workers"). The sends its behaviours make are
// send_staging.cpp's; idle parking and adoption are parking.cpp's.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <utility>

#include "executor.hpp"
#include "troupe/config.hpp"
#include "troupe/detail/idle_poll.hpp"
#include "troupe/detail/service_thread.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/thread.hpp"

namespace troupe::detail {

constinit thread_local worker* tls_worker [[gnu::tls_model("initial-exec")]] = nullptr;

worker::worker(executor& ex, std::size_t i, std::size_t b, std::size_t e)
    : exec(ex),
      index(i),
      slot_begin(b),
      slot_end(e),
      local_(new copy_queue),
      spare_(new copy_queue),
      stages_(new copy_queue[ex.mailbox_count]),
      ticket_(b),
      rng_(fast_rng::seed_for(i)) {
    touched_.reserve(ex.mailbox_count);
    claims_.reserve(ex.mailbox_count);
    claim_stamp_.reset(new std::uint64_t[ex.mailbox_count]());
}

worker::~worker() {
    delete local_;
    delete spare_;
    free_value_blocks();
}

void worker::start() {
    // User-thread workers share processors, which a nap would not free.
    nap_eligible_ = exec.stealing && !exec.user_threads && exec.workers.size() >= 2;
    value_depot_ = exec.workers.size() >= 2;
    if (nap_eligible_) sent_to_napper_.assign(exec.workers.size(), 0);
    if (exec.stealing) {
        victim_context c;
        c.self = index;
        c.workers = exec.workers.size();
        c.stamps = exec.stamps.get();
        c.worker_pu = exec.worker_pu;
        c.machine = exec.machine.get();
        victims_ = exec.cfg.custom_victims ? exec.cfg.custom_victims(c)
                                           : make_victim_selector(exec.cfg.victims, c);
    }
    if (exec.user_threads) {
        thread_attributes a;
        a.stack_size = defaults::actors::user_worker_stack;
        a.on = exec.pool.get();
        a.name = "actor worker";
        user_thread_ = troupe::thread(a, [this] { run(); });
    } else {
        thread_ = std::thread([this] { run(); });
        name_kernel_thread(thread_, "troupe-actor-", index);
    }
}

void worker::join() {
    if (thread_.joinable()) thread_.join();
    if (user_thread_.joinable()) user_thread_.join();
}

// Actors created by this worker's behaviours go round-robin over the
// mailboxes in this worker's own slots (like CAF placing spawns on the
// spawning worker): creation chains stay local; stealing rebalances.
// The creator's own mailbox (the batch in process) is skipped when the range
// has another: an actor sharing it could run only after the creator's whole
// batch, on this worker, however long that batch runs (a pipeline stage
// creating the next, Savina's sieve), and no thief could take it meanwhile.
std::size_t worker::next_ticket() noexcept {
    for (;;) {
        const std::size_t s = ticket_;
        ticket_ = s + 1 == slot_end ? slot_begin : s + 1;
        // Our own slots are never null outside our own steal.
        const mailbox* mb = exec.slots[s].load(std::memory_order_relaxed);
        if (mb != batch_ || slot_end - slot_begin == 1) return mb->index;
    }
}

void worker::run() noexcept {
    enter_thread();
    if (!exec.user_threads) {
        trace::label_thread("actor worker", index,
                            exec.cfg.name.empty() ? nullptr : exec.cfg.name.c_str());
        // (A user-thread worker's cluster pins its processors if asked.)
        if (exec.cfg.pin && exec.machine && exec.machine->is_this_system())
            (void)exec.machine->bind_current_thread(exec.worker_pu[index]);
    }
    try {
        loop();
    } catch (const std::exception& x) {
        std::fprintf(stderr, "troupe: an exception escaped an actor behaviour on worker %zu: %s\n",
                     index, x.what());
        std::terminate();
    } catch (...) {
        std::fprintf(stderr, "troupe: an exception escaped an actor behaviour on worker %zu\n",
                     index);
        std::terminate();
    }
    leave_thread();
}

void worker::loop() {
    unsigned idle = 0;
    // Steal attempts back off exponentially while they find nothing, so an
    // idle worker does not keep reading a busy worker's mailbox lines.
    unsigned steal_gap = defaults::actors::steal_every_passes, next_steal = steal_gap;
    idle_group& g = exec.idle_;
    const bool user = exec.user_threads;
    const unsigned passes_before_park = user ? defaults::actors::user_idle_passes_before_park
                                             : defaults::actors::idle_passes_before_park;
    win_began_ = timestamp();  // napping's first window
    for (;;) {
        unsigned busy = 0;
        for (std::size_t s = slot_begin; s < slot_end; ++s) {
            // Our own slots are never null here: only we null them, inside
            // our own steal. acquire: see the mailbox a thief swapped in.
            mailbox* mb = exec.slots[s].load(std::memory_order_acquire);
            // Test before gulp: a stale 0 only delays us to the next pass.
            // A mailbox in another worker's batch (an adopter's or a
            // thief's) cannot be gulped until that batch ends: skip it
            // without taking its lock (relaxed: a stale value only makes us
            // miss the gulp under the lock as before, or look one pass
            // later).
            if (mb->pending.load(std::memory_order_relaxed) == 0 ||
                mb->being_processed.load(std::memory_order_relaxed))
                continue;
            if (take(*mb)) ++busy;
        }
        // While a worker is parked (announced idle: the seq_cst sleeper
        // count), its mailboxes are ours to scan too.
        if (exec.stealing && exec.any_parked()) busy += adopt_dozing();
        if (busy) {
            // A timed stop may shut down a system whose actors never go idle.
            if (exec.shutdown.load(std::memory_order_relaxed)) [[unlikely]]
                break;
            g.stop_spinning(idle_);  // a hint here: no pass-on (see docs/actors.md)
            idle = 0;
            steal_gap = defaults::actors::steal_every_passes;
            next_steal = steal_gap;
            continue;
        }
        if (trace::on()) [[unlikely]]
            trace::batches_idle();  // the trace's run of small batches ends here
        g.start_spinning(idle_);    // no-op while counted
        if (ended_since_check_) {
            ended_since_check_ = false;
            // Pairs with the stopper's fence (Dekker): either it sees our
            // terminated count, or we see `stopping` and check for it.
            full_fence();
            exec.notify_if_done();
        }
        if (exec.shutdown.load(std::memory_order_acquire)) break;
        // An idle poller (troupe/detail/idle_poll.hpp, e.g. troupe-remote's
        // MPI progress) that found work may have delivered to our mailboxes:
        // scan again, and spin a whole idle period from now (spin-down).
        if (poll_idle()) {
            idle = 0;
            continue;
        }
        ++idle;
        if (exec.stealing && idle == next_steal) {
            if (try_steal()) {
                steal_gap = defaults::actors::steal_every_passes;
                next_steal = idle + steal_gap;
                continue;
            }
            steal_gap = std::min(steal_gap * 2, defaults::actors::steal_backoff_max_passes);
            next_steal = idle + steal_gap;
        }
        if (idle >= passes_before_park) {
            if (park_idle()) {
                idle = 0;
                steal_gap = defaults::actors::steal_every_passes;
            } else {
                // Timed out while another worker sat in a batch: one more
                // look (and steal attempt), then park again at once.
                idle = passes_before_park - 1;
                steal_gap = 1;
            }
            next_steal = idle + steal_gap;
            continue;
        }
        // A user-thread worker lets the other workers of its processor run
        // (it returns at once if none is ready).
        if (user) yield_now();
        else cpu_relax();
    }
    if (trace::on()) [[unlikely]]
        trace::batches_idle();
    g.stop_spinning(idle_);
}

// Gulps mb and processes the batch; false if there was nothing to take.
bool worker::take(mailbox& mb) {
    if (!gulp(mb)) return false;
    const std::uint32_t n = local_->size();
    // A big batch means work is piling up here: if somebody is parked and
    // nobody is looking for work, let one help. Not a napping worker: a
    // big gulp beside a napper is the napping pattern's own server batch
    // (every client's request at once: Savina's mall, buffer, list), and
    // waking the napper for it brought the crossing back at every such
    // batch (chameneos at 2 workers: 0.150 -> 0.100 s, medians of 9). The
    // napper's own look decides when the pattern has ended; a batch that
    // runs long still wakes it (flush_long_batch).
    if (n >= defaults::actors::helper_wake_batch && exec.stealing) maybe_wake_helper(false);
    process(mb);
    // Napping's count of this worker's batches, and every nap_window
    // deliveries (fewer after a nap) its look (parking.cpp). A worker of a
    // system where nobody naps (one worker, no stealing, user threads)
    // pays one test per batch.
    if (nap_eligible_) [[unlikely]] {
        win_msgs_ += n;
        ++win_gulps_;
        if (win_msgs_ >= nap_look_at_) [[unlikely]]
            look_at_crossings();
    }
    return true;
}

bool worker::gulp(mailbox& mb) noexcept {
    mb.lock.lock();
    // acquire: pairs with the release clearing it, so we see everything the
    // previous batch's behaviours did to these actors.
    if (mb.being_processed.load(std::memory_order_acquire)) {
        // Another worker holds a batch of this mailbox (we lost the
        // gulp/steal race): leave it; we try again on a later pass.
        mb.lock.unlock();
        count(stats.missed);
        return false;
    }
    if (mb.queue->empty()) {
        mb.lock.unlock();
        return false;
    }
    std::swap(mb.queue, local_);  // local_ was empty: the mailbox keeps accepting sends
    // Invariant: pending == queue->size() whenever the lock is free.
    mb.pending.store(0, std::memory_order_relaxed);
    // Invariant: being_processed <=> a worker holds an unfinished batch of mb.
    // Set under the lock, so a second gulp (stale slot pointer after a
    // steal) sees it and skips; thieves read it as a hint.
    mb.being_processed.store(true, std::memory_order_relaxed);
    mb.lock.unlock();
    return true;
}

void worker::process(mailbox& mb) {
    const std::uint32_t n = local_->size();
    count(stats.gulps);
    count(stats.gulped, n);
    // The execution trace's batch (troupe/detail/trace.hpp: big batches
    // alone, small ones summed per run).
    const bool tracing = trace::on();
    const std::uint64_t trace_t0 = tracing ? trace::batch_begin(n) : 0;
    // No atomics from here to the clear: the batch is ours alone.
    last_flush_ = timestamp();
    yield_woke_ = false;
    batch_began.store(last_flush_, std::memory_order_relaxed);
    batch_ = &mb;
    local_budget_ = defaults::actors::batch_append_budget;
    for (;;) {
        while (envelope* p = local_->pop()) {
            // The receivers are scattered over memory: start loading a later
            // one while this one runs.
            if (const envelope* ahead = local_->peek(defaults::actors::prefetch_distance)) {
                __builtin_prefetch(ahead->receiver);  // the header the executor reads
                __builtin_prefetch(reinterpret_cast<const char*>(ahead->receiver) + sizeof(actor),
                                   1);  // fields
            }
            const envelope e = *p;  // a behaviour's append may reallocate the batch
            deliver(e);
        }
        // A delivery sent to actors created in this batch: it set the rest
        // of the batch aside (so this loop pays nothing per message), and
        // they run now, depth first, before that rest (depth_first.cpp).
        if (!batch_held_) [[likely]]
            break;
        run_depth_first();
    }
    batch_ = nullptr;
    running_ = nullptr;
    batch_began.store(0, std::memory_order_relaxed);
    // Staged sends reach their mailboxes before anyone else may run these
    // actors again: a sender moved to another worker by a steal cannot
    // overtake its own earlier messages (FIFO per sender). A wake this
    // flush deferred is settled before that too (stealing off: nobody but
    // the owner may run its actors, so every wake happens at once).
    may_defer_wake_ = exec.stealing;
    flush_stages();
    may_defer_wake_ = false;
    if (deferred_) [[unlikely]]
        settle_deferred_wake();
    if (tracing) [[unlikely]]
        trace::batch_end(mb.index, n + stack_delivered_, trace_t0, exec.user_threads);
    // The mailboxes this batch held for its new actors (depth_first.cpp):
    // after the flush, for the same reason as ours below. Ours is not ours
    // any more if the batch gave it back (give_back_batch).
    if (depth_stamp_ != 0) [[unlikely]] {
        release_claims(nullptr);
        depth_stamp_ = 0;
        stack_delivered_ = 0;
        if (std::exchange(batch_given_back_, false)) {
            local_->reclaim(n);
            return;
        }
    }
    // release: publishes the behaviours' effects to the next gulper of mb
    // (which reads the flag with acquire under the lock).
    mb.being_processed.store(false, std::memory_order_release);
    local_->reclaim(n);
}

namespace {
// The trampoline's drop path (a null receiver): out of line, so that
// deliver() stays small where it is inlined into the batch loop. Takes the
// fields, not the envelope: a reference would keep the envelope copied
// whole into memory (the stalling 16-byte load, executor.hpp).
[[gnu::cold, gnu::noinline]] void drop_undelivered(dispatch_fn fn, message& m) { fn(nullptr, m); }
}  // namespace

inline void worker::deliver(const envelope& e) {
#if defined(TROUPE_CHECKED)
    worker_access::note_unqueued(*e.msg);
    // An actor that ended after this was queued (found by address, without
    // touching it: it may be freed): reported, and the message dropped.
    if (!check_delivery(e)) {
        drop_undelivered(e.fn, *e.msg);
        return;
    }
#endif
    actor& a = *e.receiver;
    // A finished (not freed) actor takes nothing more, in every build; the
    // trampoline drops the message. (The header's line is the one the
    // registry check reads next.)
    if (!worker_access::alive(a)) [[unlikely]] {
        drop_undelivered(e.fn, *e.msg);
        return;
    }
    if (!worker_access::registered(a)) [[unlikely]]
        worker_access::link_settled(a);
    // What runs now, for reports: plain stores (no fence, no lock); an
    // ask noted by an earlier delivery is forgotten (note_ask).
    running_ = &a;
    running_fn_.store(e.fn, std::memory_order_relaxed);
    asked.reply = nullptr;
    // The trampoline applies the message's action (as set now); then the
    // actor's.
    const allocation how = e.fn(&a, *e.msg);
    count(stats.received);
    if (how != Nodelete) end_actor(a, how);
}

// Delivers the depth-first stack (depth_first.cpp) after a delivery that
// sent to actors created in this batch: the top first, each delivery's own
// sends pushed on top as a group (in send order), until the stack is empty
// or the order ends for this batch (budget spent, or another worker idle
// with nothing to do while there is more than one piece of work here):
// then the stack goes to the mailboxes and the rest of the batch back to
// its own, where any worker may take them, and the batch ends.
void worker::run_depth_first() {
    // The rest of the batch back in place, and with it the self-sends.
    std::swap(local_, spare_);
    batch_held_ = false;
    local_budget_ = held_budget_;
    if (depth_stack_.empty()) return;  // handed out meanwhile (spill_depth_first)
    reverse_depth_group();
    // A self-send from a delivery off the stack must not join the batch:
    // its actor lives in a claimed mailbox, which may be released before
    // the batch ends.
    const std::uint32_t budget = local_budget_;
    local_budget_ = 0;
    from_stack_ = true;
    while (!depth_stack_.empty()) {
        if (--depth_left_ == 0 || (exec.stealing && depth_stack_.size() + local_->size() >= 2 &&
                                   another_idle() && handout_due())) {
            from_stack_ = false;
            spill_depth_first();
            give_back_batch(nullptr);
            maybe_wake_helper();
            break;
        }
        const envelope e = depth_stack_.back();
        depth_stack_.pop_back();
#if defined(TROUPE_CHECKED)
        // An actor that ended meanwhile is not touched (it may be freed).
        if (!check_delivery(e)) {
            worker_access::note_unqueued(*e.msg);
            drop_undelivered(e.fn, *e.msg);
            continue;
        }
#endif
        --worker_access::stacked(*e.receiver);
        ++depth_serial_;
        ++stack_delivered_;
        depth_group_base_ = depth_stack_.size();
        deliver(e);
        reverse_depth_group();
    }
    from_stack_ = false;
    depth_group_base_ = 0;
    local_budget_ = budget;
}

void worker::end_actor(actor& a, allocation how) {
    worker_access::unlink_settled(a);
    worker_access::mark_ended(a);
    // Monitors and links: after the mark (their messages to it are refused)
    // and before the storage goes.
    if (end_noted || !worker_access::end_unwatched(a, how)) [[unlikely]]
        life_ended(a, how);
#if defined(TROUPE_CHECKED)
    note_ended(&a, how, &exec);
#endif
    // release: live() reads terminated counts (acquire) before created
    // counts, so every ended actor's creation is visible to it.
    bump(terminated, 1, std::memory_order_release);
    ended_since_check_ = true;
    switch (how) {
    case Delete: delete &a; break;
    case Destroy: a.~actor(); break;
    default: break;
    }
}

}  // namespace troupe::detail
