// Actor workers: the scan/gulp/process loop and idle parking.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <utility>

#include "executor.hpp"
#include "troupe/config.hpp"
#include "troupe/detail/block_hook.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/idle_poll.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/error.hpp"
#include "troupe/thread.hpp"

namespace troupe::detail {

namespace {
void about_to_block(void* self) noexcept;
extern const user_thread_hooks user_worker_hooks;
}  // namespace

constinit thread_local worker* tls_worker [[gnu::tls_model("initial-exec")]] = nullptr;

worker::worker(executor& ex, std::size_t i, std::size_t b, std::size_t e)
    : exec(ex),
      index(i),
      slot_begin(b),
      slot_end(e),
      local_(new copy_queue),
      stages_(new copy_queue[ex.mailbox_count]),
      ticket_(b),
      rng_(fast_rng::seed_for(i)) {
    touched_.reserve(ex.mailbox_count);
}

worker::~worker() { delete local_; }

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
        worker& owner = *exec.workers[o];
        if (o != index) {
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
// to share it, as before.
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
    if (about_to_run_dry(&m)) {
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
#if defined(TROUPE_STATISTICS)
        if (d->exec == &exec && d->owner.load(std::memory_order_relaxed) != index)
            count(stats.crossed, 1);
#endif
        deliver_to_mailbox(*d, &e, 1);  // strong: on a throw it stays in the pipeline
        pipe_count_ = 0;
        return;
    }
    // One entry at a time: stage() is strong, so if it throws (a growth
    // failed) the entries staged so far have left the pipeline and the
    // rest are still in it, in order: nothing is staged twice.
    for (; pipe_count_ > 0; --pipe_count_)
        stage(pipeline_[(pipe_head_ + pipeline_size - pipe_count_) % pipeline_size]);
    for (std::uint32_t idx : touched_) {
        copy_queue& s = stages_[idx];
        const std::uint32_t n = s.size();
#if defined(TROUPE_STATISTICS)
        // relaxed: a hint (the owner as of now), good enough to count.
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

void worker::start() {
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
    if (exec.user_threads) {
        // Parks with troupe's park (its processor runs other threads); the
        // hooks keep tls_worker and the request scope with this user thread
        // wherever it runs, and mark it blocked when a behaviour parks it.
        // (The cluster pins its processors if asked.)
        idle_group::bind_context(idle_, this_context());
        set_user_thread_hooks(&user_worker_hooks, this);
    } else {
        tls_worker = this;
        trace::label_thread("actor worker", index,
                            exec.cfg.name.empty() ? nullptr : exec.cfg.name.c_str());
        set_block_hook(&about_to_block, this);
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
    if (exec.user_threads) {
        set_user_thread_hooks(nullptr, nullptr);  // clears tls_worker (switched_out)
    } else {
        set_block_hook(nullptr, nullptr);
        tls_worker = nullptr;
    }
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
    for (;;) {
        unsigned busy = 0;
        for (std::size_t s = slot_begin; s < slot_end; ++s) {
            // Our own slots are never null here: only we null them, inside
            // our own steal. acquire: see the mailbox a thief swapped in.
            mailbox* mb = exec.slots[s].load(std::memory_order_acquire);
            // Test before gulp: a stale 0 only delays us to the next pass.
            if (mb->pending.load(std::memory_order_relaxed) == 0) continue;
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
        if (user) troupe::this_thread::yield();
        else cpu_relax();
    }
    if (trace::on()) [[unlikely]]
        trace::batches_idle();
    g.stop_spinning(idle_);
}

// Gulps mb and processes the batch; false if there was nothing to take.
bool worker::take(mailbox& mb) {
    if (!gulp(mb)) return false;
    // A big batch means work is piling up here: if somebody is parked and
    // nobody is looking for work, let one help.
    if (local_->size() >= defaults::actors::helper_wake_batch && exec.stealing) maybe_wake_helper();
    process(mb);
    return true;
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
        if (!w->adoptable.load(std::memory_order_relaxed) ||
            !w->adoptable.exchange(false, std::memory_order_acq_rel))
            continue;
        bool left = false;
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
    batch_began.store(last_flush_, std::memory_order_relaxed);
    batch_ = &mb;
    local_budget_ = defaults::actors::batch_append_budget;
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
        trace::batch_end(mb.index, n, trace_t0, exec.user_threads);
    // release: publishes the behaviours' effects to the next gulper of mb
    // (which reads the flag with acquire under the lock).
    mb.being_processed.store(false, std::memory_order_release);
    local_->reclaim(n);
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
    running_ = &a;
    // The trampoline applies the message's action (as set now); then the
    // actor's.
    const allocation how = e.fn(&a, *e.msg);
    count(stats.received);
    if (how != Nodelete) end_actor(a, how);
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

// Returns false if it gave up waiting (timed park) instead of being woken.
bool worker::park_idle() noexcept {
    idle_group& g = exec.idle_;
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
    bool woken = true;
    if (!work && victim == victim_selector::none) {
        exec.notify_if_done();  // the announcement's RMW ordered our counts before this
        if (!exec.shutdown.load(std::memory_order_seq_cst)) {
            count(stats.parks);
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
                // running through it (adoption), splitting it over two cores
                // again. (A user-thread worker's timer wakes it through the
                // word, so it is no longer asleep and withdraws as before.)
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

// Whether a steal attempt could take something now, by steal_from's rule:
// an awake worker (not dozing: a dozing one's mailboxes are adopted) has
// two or more waiting mailboxes outside batches, or one while its batch has
// run long or it is blocked in a behaviour. Relaxed loads: a guess, read by
// a timed sleeper deciding whether to get up.
bool worker::stealable_work() const noexcept {
    const std::uint64_t now = timestamp();
    for (const auto& w : exec.workers) {
        if (w.get() == this || w->dozing.load(std::memory_order_relaxed)) continue;
        unsigned waiting = 0;
        for (std::size_t s = w->slot_begin; s < w->slot_end && waiting < 2; ++s) {
            const mailbox* mb = exec.slots[s].load(std::memory_order_acquire);
            if (mb && mb->pending.load(std::memory_order_relaxed) != 0 &&
                !mb->being_processed.load(std::memory_order_relaxed))
                ++waiting;
        }
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

void worker::flush_before_blocking() {
    flush_stages();
    // Not rate-limited (unlike wake_helper): a worker that parked before
    // this batch began parked without a timeout and would never come to
    // steal what is queued behind the blocked behaviour. The fence orders
    // our batch_began store before the `sleepers` load (the Dekker pair
    // with park_idle, see another_in_batch).
    if (!exec.stealing) return;
    full_fence();
    if (exec.any_parked()) exec.wake_one_parked(index);
}

void worker::block_in_behaviour() {
    flush_stages();  // may yield (a mailbox lock): before the flag
    if (!exec.stealing) return;
    // Dekker pair with park_idle (announce, then blocked_victim_with_work's
    // flag load): our flag store comes before our sleepers load (both
    // seq_cst), so either a parking worker sees us blocked and checks our
    // mailboxes, or we see it announced here and wake one.
    blocked.store(true, std::memory_order_seq_cst);
    if (exec.any_parked()) exec.wake_one_parked(index);
}

namespace {
// core's block hook (troupe/detail/block_hook.hpp): park() calls it when a
// behaviour of this worker is about to put the worker's kernel thread to
// sleep (a future's get, a lock, a channel, ask).
void about_to_block(void* self) noexcept {
    auto* w = static_cast<worker*>(self);
    if (w->in_batch()) w->flush_before_blocking();
}

// User-thread workers (troupe/detail/block_hook.hpp, user_thread_hooks):
// the worker's kernel-thread-local state follows its user thread.
void worker_switched_in(void* self) noexcept {
    auto* w = static_cast<worker*>(self);
    tls_worker = w;
    (void)exchange_request_scope(w->saved_scope);
    // Running again: no longer blocked (relaxed load: only we set it).
    if (w->blocked.load(std::memory_order_relaxed))
        w->blocked.store(false, std::memory_order_seq_cst);
}
void worker_switched_out(void* self) noexcept {
    auto* w = static_cast<worker*>(self);
    tls_worker = nullptr;
    w->saved_scope = exchange_request_scope(nullptr);
}
void worker_about_to_park(void* self) noexcept {
    auto* w = static_cast<worker*>(self);
    if (w->in_batch()) w->block_in_behaviour();
}
const user_thread_hooks user_worker_hooks{&worker_switched_in, &worker_switched_out,
                                          &worker_about_to_park};
}  // namespace

void worker::maybe_wake_helper() noexcept {
    // Somebody is parked while nobody is looking for work: let one parked
    // worker try to steal.
    if (!exec.any_parked()) return;
    if (exec.any_spinning()) return;
    exec.wake_helper(index);
}

}  // namespace troupe::detail
