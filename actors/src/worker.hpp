#pragma once
// Internal: an actor worker — its batch loop (batch_loop.cpp), the send half
// of its behaviours (send_staging.cpp), idle parking and adoption
// (parking.cpp), blocking behaviours and core's hooks (blocking.cpp),
// stealing (steal.cpp) — and the helpers they share. See docs/actors.md.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "troupe/actor.hpp"
#include "troupe/config.hpp"
#include "troupe/detail/copy_queue.hpp"
#include "troupe/detail/idle_group.hpp"
#include "troupe/detail/mailbox.hpp"
#include "troupe/thread.hpp"
#include "troupe/victim_selector.hpp"

namespace troupe::detail {

class executor;

// A counter written by one thread only: a plain load and store (no locked
// instruction); others read it (relaxed or acquire) as a snapshot.
inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1,
                 std::memory_order mo = std::memory_order_relaxed) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, mo);
}

// A cheap timestamp (TSC ticks on x86, steady-clock ns elsewhere).
inline std::uint64_t timestamp() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// A full (seq_cst) fence. GCC's TSan does not support fences (-Wtsan):
// there a seq_cst read-modify-write of a thread-private atomic stands in
// (a locked instruction, the same full barrier on x86).
inline void full_fence() noexcept {
#if defined(__SANITIZE_THREAD__)
    thread_local std::atomic<int> fence_word{0};
    fence_word.fetch_add(0, std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// A statistics counter: bump() in statistics builds, nothing otherwise.
inline void count(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
#if defined(TROUPE_STATISTICS)
    bump(c, n);
#else
    (void)c;
    (void)n;
#endif
}

struct worker_counters {
    std::atomic<std::uint64_t> created{0}, sent{0}, crossed{0}, received{0}, gulps{0}, gulped{0},
        missed{0}, steal_attempts{0}, no_candidate{0}, failed_swaps{0}, steals{0}, stolen{0},
        parks{0}, adopted{0}, wakes_taken_over{0}, long_batch_flushes{0}, naps{0};
};

// Private-member access for the executor (see troupe::actor / message).
// Hidden: the library's calls to its out-of-line members bind locally (no
// PLT on the delivery path).
struct [[gnu::visibility("hidden")]] worker_access {
    static mailbox* box(const actor& a) noexcept {
        return reinterpret_cast<mailbox*>(a.header_.load(std::memory_order_relaxed) &
                                          ~actor::flag_bits);
    }
    static void link_settled(actor & a) noexcept;
    static void unlink_settled(actor & a) noexcept;
    // The header word's flags change only on the worker holding the actor's
    // mailbox batch (or the actor's own thread, for attach/detach), so a
    // plain load-modify-store suffices; relaxed atomics keep the concurrent
    // sender reads well defined.
    static bool registered(const actor& a) noexcept {
        return a.header_.load(std::memory_order_relaxed) & actor::registered_bit;
    }
    static void set_flags(actor & a, std::uintptr_t clear, std::uintptr_t set) noexcept {
        a.header_.store((a.header_.load(std::memory_order_relaxed) & ~clear) | set,
                        std::memory_order_relaxed);
    }
    static bool alive(const actor& a) noexcept { return a.life() == actor::alive; }
    static void mark_ended(actor & a) noexcept { set_flags(a, actor::life_bits, actor::ended); }
    static void mark_unattached(actor & a) noexcept {
        set_flags(a, actor::life_bits, actor::unattached);
    }
    static bool unattached(const actor& a) noexcept { return a.life() == actor::unattached; }
    static void set_box(actor & a, mailbox * mb) noexcept {
        set_flags(a, ~actor::flag_bits, reinterpret_cast<std::uintptr_t>(mb));
    }
    static allocation message_allocation(const message& m) noexcept { return m.alloc_; }
    // Depth-first order (depth_first.cpp): the actor's birth stamp, and its
    // messages on its worker's stack (see actor::born_).
    static std::uint64_t born(const actor& a) noexcept {
        return a.born_.load(std::memory_order_relaxed);
    }
    static void set_born(actor & a, std::uint64_t stamp) noexcept {
        a.born_.store(stamp, std::memory_order_relaxed);
    }
    static std::uint16_t& stacked(actor & a) noexcept { return a.stacked_; }
    static std::uint32_t& stacked_group(actor & a) noexcept { return a.stacked_group_; }
#if defined(TROUPE_CHECKED)
    // A delivery starts (or is dropped): one pending send fewer. release:
    // the receive's reads of the message happen after (pairs with the
    // destructor's acquire load only for ordering of diagnostics).
    static void note_unqueued(message & m) noexcept {
        m.queued_.fetch_sub(1, std::memory_order_release);
    }
#endif
    static actor* next(actor * a) noexcept { return a->reg_next_; }
    // The life word's tombstone of an actor that finished (exit_reason::kind
    // ::finished; monitor.cpp checks that it agrees with its encoding).
    static constexpr std::uintptr_t tomb_finished = 1;
    // The end of an actor that nobody watched or linked and whose reason has
    // no text (end_noted unset): done here, inline, and true; false leaves
    // the end to life_ended. A Finished or Destroyed actor's storage stays,
    // so a monitor placed later must find the tombstone: one CAS from 0,
    // against a first monitor's CAS. A Deleted actor's storage goes at once:
    // nobody may monitor it from now on, nor concurrently (monitor() reads
    // the actor, which may be freed before it does), so a monitor placed
    // before the end happens before this load and it sees the record; if
    // none, there is nothing to write.
    static bool end_unwatched(actor & a, allocation how) noexcept {
        if (how == Delete) return a.life_.load(std::memory_order_relaxed) == 0;
        std::uintptr_t w = 0;
        return a.life_.compare_exchange_strong(w, tomb_finished, std::memory_order_acq_rel,
                                               std::memory_order_relaxed);
    }
};
// Set (monitor.cpp) when the behaviour running on this kernel thread noted
// a reason for its actor's end (poison pill, exception, exit signal); taken
// by life_ended. Constant-initialised and initial-exec: the end of every
// actor reads it with one %fs-relative load.
extern constinit thread_local bool end_noted [[gnu::tls_model("initial-exec")]];

// Internal to the library (hidden: its calls bind locally, no PLT).
class [[gnu::visibility("hidden")]] worker {
public:
    worker(executor & ex, std::size_t index, std::size_t slot_begin, std::size_t slot_end);
    ~worker();
    // Gives every kept value-send block back to ::operator delete
    // (value_blocks.cpp).
    void free_value_blocks() noexcept;
    worker(const worker&) = delete;

    void start();
    void join();

    executor& exec;
    const std::size_t index;
    const std::size_t slot_begin, slot_end;  // this worker's range of the slot array

    // This worker in its executor's idle group (its sleep word and spinner
    // count; changed only through the group's operations).
    idle_group::member& idle_member() noexcept { return idle_; }
    // Actors created by this worker's behaviours / ended by this worker.
    // Written only by this worker (release), read by live() (acquire).
    std::atomic<std::uint64_t> created{0};
    std::atomic<std::uint64_t> terminated{0};
    worker_counters stats;
    // Timestamp (rdtsc) of the start of the batch in process, 0 between
    // batches; written by this worker, read by thieves as a hint.
    std::atomic<std::uint64_t> batch_began{0};

    // Round-robin ticket for actors created by this worker's behaviours.
    std::size_t next_ticket() noexcept;
    // The ticket of an actor `a` created by a behaviour of this worker
    // (next_ticket's mailbox); stamps `a` for the depth-first order when
    // this batch may unfold it (depth_first.cpp).
    std::size_t ticket_for_new(actor & a) noexcept;

    // Whether a behaviour of this worker is running (a batch is in process).
    bool in_batch() const noexcept { return batch_ != nullptr; }
    // A send by a behaviour running on this worker. A message to the actor
    // running right now joins the batch in process (within the budget: it
    // is in the same mailbox, so FIFO holds). Anything else is staged per
    // destination mailbox until the batch ends. The receiver is likely not in
    // cache, so its mailbox is looked up only a few sends later: the send
    // prefetches it and passes through a short FIFO pipeline first.
    void send_from_behaviour(const envelope& e) {
        if (e.receiver == running_ && local_budget_ != 0) {
            --local_budget_;
            local_->push(e);
            return;
        }
        // An actor this batch created: its message runs next (depth first).
        if (depth_stamp_ > depth_over && push_depth_first(e)) return;
        __builtin_prefetch(e.receiver);
        envelope& slot = pipeline_[pipe_head_];
        if (pipe_count_ == pipeline_size) {
            stage(slot);  // strong: on a throw e is not sent and nothing moved
            // Once per pipeline_size * long_batch_checks staged sends, a
            // long batch hands out what it staged so far (send_staging.cpp),
            // before e: a throw there leaves e unsent.
            if (pipe_head_ == 0 && ++staged_rounds_ == long_batch_checks) [[unlikely]] {
                staged_rounds_ = 0;
                --pipe_count_;  // the oldest entry is staged
                flush_long_batch();
                ++pipe_count_;  // e's entry, below
            }
        } else {
            ++pipe_count_;
        }
        slot = e;
        pipe_head_ = (pipe_head_ + 1) % pipeline_size;
    }
    // Hands every staged envelope to its mailbox (in send order).
    void flush_stages();
    // flush_sends(): the behaviour is about to block; let a parked worker
    // come and steal what queues up behind it.
    void flush_before_blocking();
    // User-thread workers: a behaviour of this worker is about to park it
    // (core's about_to_park hook): flush, mark the worker blocked, wake a
    // parked worker to take what queues up behind it.
    void block_in_behaviour();
    // A behaviour of this worker yields (core's yield hooks): hand out the
    // staged sends, and once per batch wake a parked worker to come and
    // look (what it waits for may be queued behind this batch).
    void yield_in_behaviour();

    // User-thread workers: set while a behaviour has parked this worker's
    // user thread (block_in_behaviour, seq_cst), cleared when it runs again
    // (the switched_in hook). A blocked worker's mailboxes (except its
    // batch's) are fair game for thieves and are re-checked by parking
    // workers (park_idle); a sender that finds the owner blocked wakes
    // another worker (wake_owner).
    std::atomic<bool> blocked{false};
    // Set by this worker (relaxed) before it announces itself idle in
    // park_idle, cleared after it withdraws: it is asleep, or woken and not
    // yet scanning again. While set, awake workers scan its mailboxes as
    // their own (adopt_dozing); a hint, except as settle_deferred_wake
    // (send_staging.cpp) relies on it.
    std::atomic<bool> dozing{false};
    // Set by a sender that saw parked workers after appending to one of
    // this worker's mailboxes (after_send_to_sleeper,
    // wake_for_external_send: an exchange, so every setter's append is in
    // the release sequence the taker reads); taken (acquire exchange) by an
    // adopter before it scans this worker's range, and set again by that
    // adopter if it left a waiting mailbox behind (one in another batch);
    // cleared by this worker when it runs again. So adopters scan a dozing
    // worker's range only when something may wait there, not on every pass.
    std::atomic<bool> adoptable{false};
    // Set (seq_cst, after its announcement) while this worker naps
    // (parking.cpp): announced idle for a bounded time while the awake
    // workers run its mailboxes by adoption. Senders do not wake a napper
    // (after_send_to_sleeper); a worker that parks does (park_idle).
    std::atomic<bool> napping{false};
    // User-thread workers: the request scope of the behaviour running on
    // this worker while it is switched out (the hooks swap it with the
    // kernel thread's, like tls_worker).
    request_scope* saved_scope = nullptr;

    // What a behaviour of this worker asked last (note_ask): the reply's
    // future, the actor asked, its mailbox (read while the asker could
    // send to it: mailboxes outlive actors) and name, the request's types.
    // Written by this worker only; cleared at every delivery, so a note
    // names the behaviour running now. Reports read it only while they
    // pin this worker's wait record (the worker cannot move on meanwhile),
    // which orders the reads after its writes: plain fields.
    struct ask_note {
        const void* reply = nullptr;
        const actor* target = nullptr;
        const mailbox* target_box = nullptr;
        const char* target_name = nullptr;
        const dispatch_names* names = nullptr;
        bool deadline = false;
    } asked;
    // The context this worker runs as (its OS thread or user thread), set
    // when it starts and cleared when it leaves: reports pin its wait
    // record to see what a blocked behaviour waits on.
    std::atomic<const context*> ctx{nullptr};
    // Read by reports (hang_report.cpp): the actor whose behaviour runs now
    // (only while this worker's wait is pinned: it is then stable) and the
    // trampoline of the latest delivery (any time: one word).
    const actor* running_actor() const noexcept { return running_; }
    dispatch_fn running_fn() const noexcept { return running_fn_.load(std::memory_order_relaxed); }
    const mailbox* batch_mailbox() const noexcept { return batch_; }
    // The rest of the batch in process (pinned reads only, as above).
    const copy_queue& batch_rest() const noexcept { return batch_held_ ? *spare_ : *local_; }

private:
    void run() noexcept;
    // The thread's hooks and tls_worker, set for the loop (blocking.cpp).
    void enter_thread() noexcept;
    void leave_thread() noexcept;
    void loop();
    bool gulp(mailbox & mb) noexcept;
    void process(mailbox & mb);
    void flush_long_batch();
    // Inlined into process(), its one caller: an out-of-line call copies the
    // batch's envelope with one 16-byte load straight after the behaviour's
    // 8-byte stores of it (a self-send), which the CPU cannot forward from
    // them: the load waits for the stores to reach the cache (a stall on
    // every message, about twice the static send's cost).
    [[gnu::always_inline]] inline void deliver(const envelope& e);
    void end_actor(actor & a, allocation how);
    bool park_idle() noexcept;
    void look_at_crossings() noexcept;
    bool should_nap() const noexcept;
    void nap() noexcept;
    void hand_over_napper_marks() noexcept;
    bool take(mailbox & mb);
    unsigned adopt_dozing();
    unsigned waiting_in_range(const worker& w) const noexcept;
    bool left_to_adopt() noexcept;
    void after_send_to_sleeper(mailbox & d) noexcept;
    void settle_deferred_wake() noexcept;
    bool about_to_run_dry(const mailbox* except) const noexcept;
    bool stealable_work() const noexcept;
    bool another_in_batch() const noexcept;
    bool another_outside_batch() const noexcept;
    // nappers_too: a napping worker may be the one woken (see take()).
    void maybe_wake_helper(bool nappers_too = true) noexcept;
    bool parked_not_napping() const noexcept;
    // steal.cpp
    bool try_steal() noexcept;
    bool steal_from(std::size_t v) noexcept;
    std::size_t blocked_victim_with_work() noexcept;
    bool try_swap(std::size_t mine, std::size_t theirs, mailbox * expected,
                  mailbox * &given) noexcept;
    std::size_t slot_to_give() noexcept;

    void stage(const envelope& e);
    void deliver_to_mailbox(mailbox & d, const envelope* e, std::uint32_t n);
    // Depth-first order for actors created in the batch (depth_first.cpp;
    // run_depth_first is batch_loop.cpp's, beside deliver).
    bool push_depth_first(const envelope& e);
    void run_depth_first();
    void reverse_depth_group() noexcept;
    bool claim(mailbox & m) noexcept;
    void release_claims(mailbox * keep) noexcept;
    void spill_depth_first();
    void give_back_batch(mailbox * running_box) noexcept;
    bool another_idle() const noexcept;
    bool handout_due() noexcept;

    idle_group::member idle_;
    std::thread thread_;          // kernel-thread workers
    troupe::thread user_thread_;  // user-thread workers
    copy_queue* local_;           // the empty queue a gulp swaps in; drained by process()
    // Empty; swapped with local_ while the rest of a batch is set aside for
    // a depth-first run (batch_held_, depth_first.cpp).
    copy_queue* spare_;
    // The mailbox whose batch process() is running, else nullptr.
    mailbox* batch_ = nullptr;
    // The actor whose behaviour is running, else nullptr: a plain field
    // (the send path compares with it), read by reports only while they
    // pin this worker's wait (see running_actor). The trampoline of its
    // delivery (of the latest one between batches): written by this worker
    // only (a relaxed store: a plain move), read by reports at any time.
    actor* running_ = nullptr;
    std::atomic<dispatch_fn> running_fn_{nullptr};
    // End-of-batch flush (process()): a send that finds its mailbox's owner
    // asleep may leave the wake to settle_deferred_wake (at most one
    // mailbox per flush, in deferred_).
    bool may_defer_wake_ = false;
    mailbox* deferred_ = nullptr;
    // settle_deferred_wake: settles left that trust the latest dry verdict.
    static constexpr std::uint32_t dry_trust_hops = 15;
    std::uint32_t dry_trust_ = 0;
    // Napping (parking.cpp): this worker's deliveries, gulps and sends to
    // other workers' mailboxes since its last look, and its naps in a row.
    // nap_eligible_: this system's workers may nap (set by start()); the
    // count of deliveries at which the next look is due.
    bool nap_eligible_ = false;
    std::uint32_t win_msgs_ = 0, win_gulps_ = 0, win_cross_ = 0, nap_level_ = 0;
    std::uint32_t nap_look_at_ = defaults::actors::nap_window;
    std::uint64_t win_began_ = 0;  // timestamp() when this window began
    // Napping workers whose ranges this worker appended to since its last
    // adoption pass (indexed by worker; sized by start() when workers may
    // nap). A send to a napper marks it here instead of exchanging the
    // napper's shared `adoptable` flag: this worker is awake, and its own
    // next pass (adopt_dozing, in the same pass as the batch that sent)
    // scans the range, so no other worker needs to hear of the append.
    // Saves two read-modify-writes per flush and pass while the other
    // worker naps (Savina's big runs on one worker that way).
    std::vector<std::uint8_t> sent_to_napper_;

private:
    // Value sends' blocks this worker keeps (value_blocks.cpp), by size in
    // 8-byte words, each list singly linked through the blocks' first
    // word; value_blocks_kept_ bytes in all, at most defaults
    // value_blocks_kept_max. Touched only by the thread running as this
    // worker (tls_worker); freed by the destructor. The spill lists, for
    // the blocks freed beyond the bound, are at the end of the class.
    friend void* value_block_take(std::size_t bytes);
    friend void value_block_give(void* p, std::size_t bytes) noexcept;
    void* value_blocks_[value_block_max / 8 + 1] = {};
    std::size_t value_blocks_kept_ = 0;

private:
    // Sends to running_ that may still join the batch (fairness bound).
    std::uint32_t local_budget_ = 0;
    // Depth-first order (depth_first.cpp): 0 while this batch has created
    // no actor, depth_over once the order has ended for this batch, else
    // the batch's stamp (unique per worker of an executor: a count, then
    // the worker index), which the actors it created carry in born_.
    static constexpr std::uint64_t depth_over = 1;
    std::uint64_t depth_stamp_ = 0;
    // flush_long_batch's clock: staged sends since it last looked (counted
    // in pipeline wraps, pipeline_size sends each), and the
    // start of the batch or its latest early flush (timestamp()).
    std::uint32_t staged_rounds_ = 0;  // pipeline wraps while full, mod long_batch_checks
    std::uint64_t last_flush_ = 0;
    // yield_in_behaviour woke a parked worker in this batch already.
    bool yield_woke_ = false;
    // Sends not yet staged (oldest at (pipe_head_ - pipe_count_)).
    static constexpr std::uint32_t pipeline_size = 8;
    static constexpr std::uint32_t long_batch_checks =
        defaults::actors::long_batch_flush_check / pipeline_size
            ? defaults::actors::long_batch_flush_check / pipeline_size
            : 1;
    envelope pipeline_[pipeline_size];
    std::uint32_t pipe_head_ = 0, pipe_count_ = 0;
    // Per destination mailbox of this system: staged envelopes, in send order.
    std::unique_ptr<copy_queue[]> stages_;
    std::vector<std::uint32_t> touched_;  // mailboxes whose stage is non-empty
    std::size_t ticket_;
    // Depth-first order: sends to actors created in this batch, waiting
    // (the top runs next; each delivery's sends form a group, reversed on
    // top so they run in send order); the deliveries left (budget); the
    // serial of the delivery in process and where its group starts; the
    // mailboxes other than the batch's that this batch holds for its new
    // actors (being_processed set, as a gulp does), and per mailbox the
    // stamp under which it was claimed; whether a delivery from the stack
    // runs now; batches stamped so far.
    std::vector<envelope> depth_stack_;
    std::uint32_t depth_left_ = 0, depth_serial_ = 0;
    std::size_t depth_group_base_ = 0;
    std::vector<mailbox*> claims_;
    std::unique_ptr<std::uint64_t[]> claim_stamp_;
    bool from_stack_ = false;
    // Deliveries from the stack in the batch in process, for the execution
    // trace's message count (reset at the end of every batch that created
    // actors: only such a batch delivers from the stack).
    std::uint32_t stack_delivered_ = 0;
    // The rest of the batch waits in spare_ (local_ is empty) while the
    // delivery that first pushed onto the stack finishes; local_budget_
    // is 0 meanwhile, its value in held_budget_.
    bool batch_held_ = false;
    std::uint32_t held_budget_ = 0;
    // The batch's mailbox was given back (give_back_batch): process() must
    // not clear its being_processed.
    bool batch_given_back_ = false;
    std::uint64_t depth_batches_ = 0;
    std::uint64_t last_handout_ = 0;  // timestamp() of the latest hand-out to an idle worker
    fast_rng rng_;                    // steal.cpp: scan starts; thread-confined
    std::unique_ptr<victim_selector> victims_;
    bool ended_since_check_ = false;

public:
    // Burst-sized copy-queue arrays kept for this worker's next bursts
    // (copy_queue::grow and cut_back on this worker's thread only). Last:
    // cold, and 528 bytes that would otherwise shift the hot fields above.
    burst_cache bursts;

private:
    // Value-send blocks freed beyond value_blocks_kept_max, by size, on
    // their way to the executor's depot a chain at a time (count: blocks in
    // the chain so far); value_depot_: this system has another worker that
    // may take them (set by start()). Cold, so last.
    struct value_spill {
        void* head = nullptr;
        std::uint32_t count = 0;
    };
    value_spill value_spill_[value_block_max / 8 + 1];
    bool value_depot_ = false;
};

// The worker running on this kernel thread, or nullptr. Constant-initialised
// and initial-exec: a send reads it with one %fs-relative load.
extern constinit thread_local worker* tls_worker [[gnu::tls_model("initial-exec")]];
// Replaces this kernel thread's innermost request scope (reply_duty.cpp);
// returns the previous one. For the user-thread workers' switch hooks.
request_scope* exchange_request_scope(request_scope* s) noexcept;

}  // namespace troupe::detail
