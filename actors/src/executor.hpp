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
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"
#include "troupe/topology.hpp"
#include "troupe/victim_selector.hpp"

#include "worker.hpp"

namespace troupe::detail {

// A system's count of asks outstanding (troupe::dump): asked and not yet
// answered. A request may be answered after its system is gone (a deferred
// reply), so the count lives apart, shared: word = outstanding << 1 | 1
// while the executor lives; whoever takes it to 0 deletes it (one RMW per
// ask and per answer; see begin_ask/end_ask in reply_duty.cpp).
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

// Wakes the worker owning `mb` if it is parked (wakes.cpp). Called by a
// send that saw parked workers.
void wake_owner(mailbox& mb) noexcept;

// Writes executor `arg`'s section of troupe::dump (actor_system.cpp).
void write_actor_dump(void* arg, std::ostream& os);

// What a report saw of the workers of a running system (hang_report.cpp):
// one line per worker (what it runs, since when, what a blocked behaviour
// waits on), the request cycles among blocked behaviours, and the actors
// of the mailboxes whose batch a blocked worker holds (readable while it
// stays blocked). Every fact about a blocked worker is read while its wait
// record is pinned, and the cycles are re-checked before they are listed.
struct held_batch {
    const mailbox* box = nullptr;      // the mailbox whose batch the worker holds
    const wait_reason* rec = nullptr;  // the worker's wait, as read: while its
    std::uint32_t seq = 0;             // sequence is unchanged, all this holds
    std::vector<const actor*> actors;  // its settled actors and the receivers left in the batch
    std::vector<std::string> types;    // their dynamic types, in order
    bool complete = true;              // the whole rest of the batch was scanned
};
// Reports scan at most this many queued envelopes of one queue for actors
// that were sent a message and have not received one yet.
inline constexpr std::uint32_t max_scanned_envelopes = 1u << 16;
struct workers_view {
    std::vector<std::string> lines;   // "worker 0: ..."
    std::vector<std::string> cycles;  // "request cycle: actor 'a' ..."
    std::size_t blocked = 0;          // workers blocked inside a behaviour
    std::vector<bool> is_blocked;     // by worker index
    std::vector<held_batch> held;     // one per blocked worker
    // Every worker blocked inside a behaviour, each on what (one clause
    // each, for the stop report); empty unless all are.
    std::string all_blocked;
};
// Looks at the workers of `ex` (a running system: its workers started and
// not joined). Takes mailbox locks briefly; allocates.
workers_view look_at_workers(executor& ex);

// Value-send blocks on their way between an executor's workers
// (value_blocks.cpp): per size in 8-byte words, a stack of chains of
// defaults value_block_chain blocks. A chain is linked through its blocks'
// first words and ends in null; the stack through each chain's first
// block's second word (a pooled message is at least two words). Any worker
// of the executor puts and takes whole chains under `lock`; the lock's
// release and acquire order the blocks' last writes on one worker before
// their reuse on another.
struct [[gnu::visibility("hidden")]] value_block_depot {
    value_block_depot() = default;
    value_block_depot(const value_block_depot&) = delete;
    ~value_block_depot();  // gives every block to ::operator delete
    troupe::spinlock lock{"value block depot"};
    std::atomic<void*> chains[value_block_max / 8 + 1] = {};  // stored under lock
    std::size_t bytes = 0;                                    // in all the chains
};

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
    // Takes the stopper's wake from `waiter`, if still there, and unparks it.
    void wake_stopper() noexcept;
    // Wakes worker w if it is parked; true if this call woke it.
    bool wake(std::size_t w) noexcept;
    // Wakes one parked worker to look for work (rate-limited).
    void wake_helper(std::size_t from) noexcept;
    // After an external send that saw `sleepers` != 0 under mb's lock: wakes
    // mb's owner if it is parked, or a parked helper if the owner is inside
    // a batch (rate-limited).
    void wake_for_external_send(mailbox & mb) noexcept;
    // Whether worker o sleeps (not napping) while another worker is awake
    // between batches: that one adopts o's range instead of o being woken
    // (wakes.cpp). After a seq_cst exchange of o's `adoptable`.
    bool looker_takes_over(std::size_t o) noexcept;
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
    // When the executor was made, on both clocks: reports convert a
    // worker's batch stamp (timestamp() ticks) to seconds with them.
    std::uint64_t born_ticks = 0;
    std::int64_t born_ns = 0;

private:
    friend class worker;  // parks and spins through idle_ (parking.cpp, batch_loop.cpp)
    // The workers as an idle group: member w is worker w. Spinner counts are
    // hints here (senders wake a mailbox's owner; see docs/actors.md).
    idle_group idle_;
    // Time (us) of the latest rate-limited helper wake.
    std::atomic<std::int64_t> last_helper_wake_{0};
    // Stops and joins the workers, except those `leave` says are blocked
    // inside a behaviour (a timed stop that gave up leaves them: their
    // behaviour may never return; the executor is then never freed).
    void shut_down_workers(const std::vector<bool>* leave = nullptr);
    void report_leftovers();
    stop_report survivors() const;
    actor_statistics final_stats_{};

public:
    // Value-send blocks between the workers (value_blocks.cpp). Only a
    // running worker's thread uses it, so it may go before the workers'
    // destructors run; last, as it is cold.
    value_block_depot value_depot;
};

// The executor new actors join when nothing more specific applies.
executor* default_executor() noexcept;

// The survivors of a system whose workers may still run (actor_system.cpp):
// by type, with what `v` saw of the workers (see survivors_now there).
stop_report survivors_running(executor& ex, const workers_view& v);

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
