#pragma once
// Internal: the executor behind an actor_system — mailboxes, the slot array
// stealing permutes, workers. See docs/actors.md for the design and the
// invariants; each atomic step below names the one it keeps.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "troupe/actor.hpp"
#include "troupe/actor_statistics.hpp"
#include "troupe/actor_system.hpp"
#include "troupe/actor_system_config.hpp"
#include "troupe/cluster.hpp"
#include "troupe/config.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/dump_section.hpp"
#include "troupe/detail/idle_group.hpp"
#include "troupe/detail/mailbox.hpp"
#include "troupe/monitor.hpp"
#include "troupe/thread.hpp"
#include "troupe/topology.hpp"
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
        parks{0}, adopted{0}, wakes_taken_over{0}, long_batch_flushes{0};
};

// Private-member access for the executor (see troupe::actor / message).
struct worker_access {
    static mailbox* box(const actor& a) noexcept {
        return reinterpret_cast<mailbox*>(a.header_.load(std::memory_order_relaxed) &
                                          ~actor::flag_bits);
    }
    static void link_settled(actor& a) noexcept;
    static void unlink_settled(actor& a) noexcept;
    // The header word's flags change only on the worker holding the actor's
    // mailbox batch (or the actor's own thread, for attach/detach), so a
    // plain load-modify-store suffices; relaxed atomics keep the concurrent
    // sender reads well defined.
    static bool registered(const actor& a) noexcept {
        return a.header_.load(std::memory_order_relaxed) & actor::registered_bit;
    }
    static void set_flags(actor& a, std::uintptr_t clear, std::uintptr_t set) noexcept {
        a.header_.store((a.header_.load(std::memory_order_relaxed) & ~clear) | set,
                        std::memory_order_relaxed);
    }
    static bool alive(const actor& a) noexcept { return a.life() == actor::alive; }
    static void mark_ended(actor& a) noexcept { set_flags(a, actor::life_bits, actor::ended); }
    static void mark_unattached(actor& a) noexcept {
        set_flags(a, actor::life_bits, actor::unattached);
    }
    static bool unattached(const actor& a) noexcept { return a.life() == actor::unattached; }
    static void set_box(actor& a, mailbox* mb) noexcept {
        set_flags(a, ~actor::flag_bits, reinterpret_cast<std::uintptr_t>(mb));
    }
    static allocation message_allocation(const message& m) noexcept { return m.alloc_; }
#if defined(TROUPE_CHECKED)
    // A delivery starts (or is dropped): one pending send fewer. release:
    // the receive's reads of the message happen after (pairs with the
    // destructor's acquire load only for ordering of diagnostics).
    static void note_unqueued(message& m) noexcept {
        m.queued_.fetch_sub(1, std::memory_order_release);
    }
#endif
    static actor* next(actor* a) noexcept { return a->reg_next_; }
};

// Internal to the library (hidden: its calls bind locally, no PLT).
class [[gnu::visibility("hidden")]] worker {
public:
    worker(executor & ex, std::size_t index, std::size_t slot_begin, std::size_t slot_end);
    ~worker();
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
        __builtin_prefetch(e.receiver);
        envelope& slot = pipeline_[pipe_head_];
        if (pipe_count_ == pipeline_size) {
            stage(slot);  // strong: on a throw e is not sent and nothing moved
            // Once per pipeline_size * long_batch_checks staged sends, a
            // long batch hands out what it staged so far (worker.cpp),
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
    // (worker.cpp) relies on it.
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
    // User-thread workers: the request scope of the behaviour running on
    // this worker while it is switched out (the hooks swap it with the
    // kernel thread's, like tls_worker).
    request_scope* saved_scope = nullptr;

private:
    void run() noexcept;
    void loop();
    bool gulp(mailbox & mb) noexcept;
    void process(mailbox & mb);
    void flush_long_batch();
    // Inlined into process(), its one caller: as an out-of-line call the
    // batch's envelope was copied with one 16-byte load straight after the
    // behaviour's 8-byte stores of it (a self-send), which cannot be
    // forwarded from them: static send went from 4.9 to 13 ns per message.
    [[gnu::always_inline]] inline void deliver(const envelope& e);
    void end_actor(actor & a, allocation how);
    bool park_idle() noexcept;
    bool take(mailbox & mb);
    unsigned adopt_dozing();
    void after_send_to_sleeper(mailbox & d) noexcept;
    void settle_deferred_wake() noexcept;
    bool about_to_run_dry(const mailbox* except) const noexcept;
    bool stealable_work() const noexcept;
    bool another_in_batch() const noexcept;
    bool another_outside_batch() const noexcept;
    void maybe_wake_helper() noexcept;
    // steal.cpp
    bool try_steal() noexcept;
    bool steal_from(std::size_t v) noexcept;
    std::size_t blocked_victim_with_work() noexcept;
    bool try_swap(std::size_t mine, std::size_t theirs, mailbox * expected,
                  mailbox * &given) noexcept;
    std::size_t slot_to_give() noexcept;

    void stage(const envelope& e);
    void deliver_to_mailbox(mailbox & d, const envelope* e, std::uint32_t n);

    idle_group::member idle_;
    std::thread thread_;          // kernel-thread workers
    troupe::thread user_thread_;  // user-thread workers
    copy_queue* local_;           // the empty queue a gulp swaps in; drained by process()
    // The mailbox whose batch process() is running, else nullptr.
    mailbox* batch_ = nullptr;
    // The actor whose behaviour is running, else nullptr.
    actor* running_ = nullptr;
    // End-of-batch flush (process()): a send that finds its mailbox's owner
    // asleep may leave the wake to settle_deferred_wake (at most one
    // mailbox per flush, in deferred_).
    bool may_defer_wake_ = false;
    mailbox* deferred_ = nullptr;
    // Sends to running_ that may still join the batch (fairness bound).
    std::uint32_t local_budget_ = 0;
    // flush_long_batch's clock: staged sends since it last looked (counted
    // in pipeline wraps, pipeline_size sends each), and the
    // start of the batch or its latest early flush (timestamp()).
    std::uint32_t staged_rounds_ = 0;  // pipeline wraps while full, mod long_batch_checks
    std::uint64_t last_flush_ = 0;
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
    fast_rng rng_;  // steal.cpp: scan starts; thread-confined
    std::unique_ptr<victim_selector> victims_;
    bool ended_since_check_ = false;

public:
    // Burst-sized copy-queue arrays kept for this worker's next bursts
    // (copy_queue::grow and cut_back on this worker's thread only). Last:
    // cold, and 528 bytes that would otherwise shift the hot fields above.
    burst_cache bursts;
};

// A system's count of asks outstanding (troupe::dump): asked and not yet
// answered. A request may be answered after its system is gone (a deferred
// reply), so the count lives apart, shared: word = outstanding << 1 | 1
// while the executor lives; whoever takes it to 0 deletes it (one RMW per
// ask and per answer; see begin_ask/end_ask in actor.cpp).
struct ask_counter {
    std::atomic<std::uint64_t> word{1};
    // Asks with a deadline (deadline.cpp): expired, and expired rounds whose
    // receiver has not answered yet (still counted in `word`); answers that
    // came after the expiry and were dropped.
    std::atomic<std::uint64_t> timed_out{0};
    std::atomic<std::uint64_t> awaiting_late{0};
    std::atomic<std::uint64_t> late_replies{0};
    std::uint64_t outstanding() const noexcept { return word.load(std::memory_order_relaxed) >> 1; }
};

// The executor's reference to its ask_counter (released with it, also when
// its constructor throws after this member).
struct ask_counter_ref {
    ask_counter* const p = new ask_counter;
    ask_counter_ref() = default;
    ask_counter_ref(const ask_counter_ref&) = delete;
    ~ask_counter_ref() {
        if (p->word.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p;
    }
};

// Monitors and links (monitor.cpp): the name of a reason kind; the reason
// an ending actor's behaviour threw (set when the handler ends it); an actor
// destroyed before it finished; the survivors of a stop that gave up.
const char* kind_name(exit_reason::kind k) noexcept;
void note_threw(const std::string& exception_type, const std::string& what) noexcept;
void life_destroyed(actor& a) noexcept;
void life_system_stopped(executor& ex) noexcept;
// Timers (timers.cpp): an executor becomes a target of timer callbacks /
// stops being one (after this returns, no callback is sending into it).
void timers_add_system(executor& ex) noexcept;
void timers_remove_system(executor& ex) noexcept;

// Writes executor `arg`'s section of troupe::dump (actor_system.cpp).
void write_actor_dump(void* arg, std::ostream& os);

class [[gnu::visibility("hidden")]] executor {
public:
    executor(const actor_system_config& cfg, actor_system* owner);
    ~executor();
    executor(const executor&) = delete;

    stop_report stop(bool timed, std::chrono::steady_clock::time_point deadline);

    // Actors created and not ended (a sound snapshot, see live() in
    // executor.cpp).
    std::uint64_t live() const noexcept;
    // Worker side of termination: if a stop is waiting and no actor is
    // alive, wake the stopper. Callers run a seq_cst fence (or RMW) first.
    void notify_if_done() noexcept;
    // Wakes worker w if it is parked; true if this call woke it.
    bool wake(std::size_t w) noexcept;
    // Wakes one parked worker to look for work (rate-limited).
    void wake_helper(std::size_t from) noexcept;
    // After an external send that saw `sleepers` != 0 under mb's lock: wakes
    // mb's owner if it is parked, or a parked helper if the owner is inside
    // a batch (rate-limited).
    void wake_for_external_send(mailbox & mb) noexcept;
    // Wakes one parked worker other than `from`, if any (not rate-limited).
    void wake_one_parked(std::size_t from) noexcept;
    // Some worker has announced itself parked (seq_cst load; the Dekker
    // partner of park_idle's announcement).
    bool any_parked() const noexcept { return idle_.any_sleeping(); }
    // Some worker is idle and looking for work (a hint).
    bool any_spinning() const noexcept { return idle_.any_spinning(); }
    // Workers asleep now (a snapshot).
    std::size_t parked_workers() const noexcept { return idle_.members_asleep(); }
    actor_statistics statistics() const;

    std::size_t ticket_external() noexcept;

    actor_system_config cfg;
    actor_system* const owner;
    const std::size_t mailbox_count;
    bool stealing = true;
    // Workers are troupe user threads on `pool` (cfg.threads == user).
    const bool user_threads;
    std::unique_ptr<troupe::cluster> pool;  // declared before workers: outlives them

    std::unique_ptr<mailbox[]> mailboxes;
    // slots[i] points to the mailbox in position i; worker w owns positions
    // [w.slot_begin, w.slot_end). Stealing swaps two entries (two CAS, null
    // as the intermediate value). Invariant: each mailbox appears in exactly
    // one slot, except during a swap, when the thief's slot holds null.
    std::unique_ptr<std::atomic<mailbox*>[]> slots;
    std::vector<std::unique_ptr<worker>> workers;
    std::vector<std::size_t> worker_pu;
    std::unique_ptr<topology> machine;
    // Per-worker timestamp of its latest steal attempt (longest-victim).
    std::unique_ptr<std::atomic<std::uint64_t>[]> stamps;

    alignas(64) std::atomic<bool> stopping{false};  // a stop is waiting for the live count
    std::atomic<bool> shutdown{false};              // workers must exit
    std::atomic<bool> accepting{true};              // actors may be created
    std::atomic<context*> waiter{nullptr};          // the stopper, until someone claims its wake
    std::atomic<std::uint64_t> ext_created{0}, ext_terminated{0}, ext_ticket{0};
    std::atomic<std::uint64_t> ext_sent{0};
    std::atomic<bool> stopped{false};
    std::atomic<bool> abandoned{false};  // a timed stop gave up with survivors
    // This system's section of troupe::dump (actor_system.cpp).
    dump_section dump_;
    // Asks outstanding to this system's actors (for the dump).
    ask_counter_ref asks;
    // Timer messages dropped because their actor had finished (timers.cpp).
    std::atomic<std::uint64_t> timers_dropped{0};
    // The list of live executors that timer callbacks send into (timers.cpp).
    executor* timers_next = nullptr;

private:
    friend class worker;  // parks and spins through idle_ (worker.cpp)
    // The workers as an idle group: member w is worker w. Spinner counts are
    // hints here (senders wake a mailbox's owner; see docs/actors.md).
    idle_group idle_;
    // Time (us) of the latest rate-limited helper wake.
    std::atomic<std::int64_t> last_helper_wake_{0};
    void shut_down_workers();
    void report_leftovers();
    stop_report survivors() const;
    actor_statistics final_stats_{};
};

// The worker running on this kernel thread, or nullptr. Constant-initialised
// and initial-exec: a send reads it with one %fs-relative load.
extern constinit thread_local worker* tls_worker [[gnu::tls_model("initial-exec")]];
// The executor new actors join when nothing more specific applies.
executor* default_executor() noexcept;
// Replaces this kernel thread's innermost request scope (actor.cpp);
// returns the previous one. For the user-thread workers' switch hooks.
request_scope* exchange_request_scope(request_scope* s) noexcept;

// stop() has waited `waited` with actors alive: builds a survivor report
// from the running system (actor_system.cpp) and hands it to the
// configured hook, or prints it. Never throws.
void report_stop_waiting(executor& ex, std::chrono::nanoseconds waited) noexcept;

#if defined(TROUPE_CHECKED)
// Checked builds: a process-wide record of ended actors by address (an
// address leaves it when a new actor is constructed there).
void note_ended(const actor* a, allocation how, const executor* ex);
void forget_ended(const actor* a);
bool check_delivery(const envelope& e) noexcept;
#endif

}  // namespace troupe::detail
