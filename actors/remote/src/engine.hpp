#pragma once
// Internal: the progress engine of one rank. See docs/remote.md ("Inside")
// for the design; each atomic step below names the invariant it keeps.
// The C API only (the deprecated C++ bindings do not compile warning-free).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "troupe/context.hpp"
#include "troupe/detail/dump_section.hpp"
#include "troupe/detail/idle_poll.hpp"
#include "troupe/remote/detail/engine_api.hpp"
#include "troupe/remote/world.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::remote::detail {

/// Tag of batches on the engine's communicator.
inline constexpr int data_tag = 1;

/// Where this rank may spin (binding.cpp).
struct binding {
    int cpus = 0;       // CPUs in this rank's affinity mask
    int sharers = 1;    // ranks of this node whose masks overlap it (itself included)
    bool spare = true;  // a spinning poller takes no CPU another thread needs
};
/// Probes the affinity masks of this node's ranks (collective on
/// MPI_COMM_WORLD).
binding probe_binding();

class engine {
public:
    engine(int rank, int size, world_options options);
    ~engine();  // stops the thread after the outboxes are sent
    engine(const engine&) = delete;

    const int rank, size;
    MPI_Comm comm = MPI_COMM_NULL;        // point-to-point batches (engine thread)
    MPI_Comm collective = MPI_COMM_NULL;  // stop rounds and barriers (user threads)
    MPI_Comm final_comm = MPI_COMM_NULL;  // the world's last barrier only (~world)

    // ---- any thread
    // Queues `frame` for rank `to` (or posts it directly). Throws
    // std::length_error if it would take the unsent batch for `to` past
    // batch_limit_ (strong: nothing queued), std::out_of_range for a bad rank.
    void ship(int to, const byte_buffer& frame);
    // As ship, but returns false (nothing queued; `queued`: the bytes
    // waiting) instead of throwing when the batch is full.
    bool ship_or_full(int to, const byte_buffer& frame, std::size_t& queued);
    void wake() noexcept;
    std::uint64_t register_ask(troupe::detail::request_tag& q, ask_complete_fn fn, int to,
                               std::string_view name);
    void cancel_ask(std::uint64_t id) noexcept;
    // Request `q` (ask `id`) is being destroyed: forgets it, so that its
    // reply, if it comes, is dropped quietly; waits while the engine is
    // writing that reply into it.
    void abandon_ask(troupe::detail::request_tag& q, std::uint64_t id) noexcept;
    void publish(std::string_view name, troupe::actor& a, std::string_view type);
    // `a` is being destroyed (~actor, through troupe::detail::unpublish_hook):
    // forgets it, waiting out a delivery to it in progress; later frames for
    // it are dropped as for an actor that is gone (report_gone, or an
    // actor_gone error to the asker).
    void unpublish(troupe::actor& a) noexcept;
    void lookup(int to, std::string_view name, std::function<void(const lookup_answer&)> done);
    void report(int from, std::string type, const std::string& what);
    void send_raw(int to, const void* bytes, std::size_t n);

    // Counters for termination: batches sent (counted when queued to MPI,
    // or looped back) and received (counted when parsed). Written by the
    // progress token's holder (and direct senders, send_raw), read by stop.
    std::atomic<std::uint64_t> batches_sent{0}, batches_received{0};
    std::atomic<std::uint64_t> frames_sent{0}, frames_received{0};
    // Requests received and not yet replied to (the token holder writes).
    std::atomic<std::uint64_t> pending_replies{0};
    // Whether some outbox holds frames or a send is still in flight
    // (a snapshot taken under the outbox locks).
    bool busy_sending() noexcept;
    // Waits (sleeping) until the outboxes are empty and every send completed.
    void drain_sends();

    // Polls spin only with a spare core, else yield the CPU between polls
    // (binding.cpp); before any traffic.
    void set_binding(const binding& b) noexcept;
    const binding& cores() const noexcept { return binding_; }

    // ---- ranks that end (rank_end.cpp)
    // This rank's world is ending: tells every other rank (a goodbye frame
    // after everything sent to it), which then fails what awaits this rank.
    // `collectives`: how many collectives this rank entered on `collective`.
    void say_goodbye(std::uint64_t collectives) noexcept;
    // Whether rank `r` has said goodbye.
    bool ended(int r) const noexcept {
        return ended_[static_cast<std::size_t>(r)].load(std::memory_order_seq_cst) >= 0;
    }
    // The error for `what` (e.g. "ask \"bank.deposit\"") needing ended rank `r`.
    rank_lost lost_error(int r, const std::string& what) const;
    // The next collective on `collective` (numbered from 1 on every rank,
    // so the k-th ones match); begin_collective throws rank_lost if a rank
    // that ended before entering it is known already.
    std::uint64_t begin_collective(const char* what);
    // A rank that ended without entering collective `k`, or -1.
    int collective_blocked(std::uint64_t k) const noexcept;
    std::uint64_t collectives_entered() const noexcept {
        return collectives_.load(std::memory_order_relaxed);
    }

    // ---- the progress token's holder
    void watch(pending_reply& p);
    context& waiter() noexcept { return *ctx_; }
    std::atomic<int>& park_counter() noexcept { return counter_; }

private:
    struct alignas(64) outbox {
        troupe::spinlock lock{"troupe::remote outbox"};
        byte_buffer buf;
        std::uint64_t frames = 0;  // frames in buf (under lock)
        // Bytes in buf, stored under lock; read without it by the engine as
        // a hint (a stale zero is caught by the park recheck under the lock).
        std::atomic<std::size_t> bytes{0};
        // The direct path (ship() posts the frame itself when buf is empty):
        // its one send in flight and the buffer it reads (under lock).
        MPI_Request direct_req = MPI_REQUEST_NULL;
        byte_buffer direct_buf;
        // Whether direct_req is still in flight: stored under lock, read
        // without it by the engine (a hint) and by busy_sending.
        std::atomic<bool> direct_busy{false};
    };
    struct in_flight {
        MPI_Request req;
        byte_buffer buf;
        int to = -1;
    };
    struct published {
        troupe::actor* a;  // nullptr once destroyed (unpublish)
        std::string name, type;
        std::uint64_t type_key;
        std::uint64_t dropped = 0;  // messages dropped because it is gone
    };
    struct ask_slot {
        troupe::detail::request_tag* q = nullptr;
        ask_complete_fn fn = nullptr;
        std::uint32_t generation = 0;
        std::uint32_t next_free = 0;
        // The request was destroyed before its reply came: the slot waits
        // for the reply (dropped quietly) before it is reused.
        bool abandoned = false;
        int to = -1;            // the rank asked
        std::string_view name;  // the request's message name (for errors)
    };

    void run() noexcept;
    // One progress pass by whichever thread gets the progress token (the
    // engine thread, or an idle processor or actor worker through the idle
    // poller); false if nothing was done or another thread holds the token.
    bool try_progress() noexcept;
    // The progress policy (docs/remote.md, "Progress"): something must be
    // polled closely now (an ask or lookup awaits its reply, a send is
    // incomplete, or the last activity is within the spin-down window).
    bool hot(std::int64_t now_ns) const noexcept;
    // Sleeps while other threads poll for us, until one of them stops
    // (sleeping_hook), quit, or `watch` passes; true if woken.
    bool delegated_sleep(std::chrono::nanoseconds watch, std::uint64_t sleeps_seen) noexcept;
    static bool poll_hook(void* self) noexcept;
    static void sleeping_hook(void* self) noexcept;
    static bool awaited_hook(void* self) noexcept;
    // Whether ask `id` still awaits its reply (true if the table is busy).
    bool ask_pending(std::uint64_t id) noexcept;
    void wake_delegated() noexcept;
    bool progress();
    bool receive();
    bool flush_outboxes();
    bool complete_sends();
    bool complete_direct();
    bool post_direct(outbox& o, int to, const byte_buffer& frame);
    bool scan_replies();
    // Replies (replies.cpp): ships the encoded reply in `frame` to `to`, or
    // holds it (taking the buffer) while the batch for `to` is full or
    // earlier replies are held; drops pending_replies once it is queued.
    void ship_reply(int to, byte_buffer& frame) noexcept;
    // Ships held replies in order while they fit; true if it shipped any.
    bool ship_held_replies() noexcept;
    bool idle_sleep(std::chrono::nanoseconds d);
    bool work_queued() noexcept;
    void parse(const char* p, std::size_t n, int from);
    void handle(const frame_header& h, std::string_view name, byte_reader& payload, int from);
    void handle_message(const frame_header& h, std::string_view name, byte_reader& payload,
                        int from);
    void handle_reply(const frame_header& h, std::string_view name, byte_reader& payload, int from);
    void handle_lookup(const frame_header& h, byte_reader& payload, int from);
    void handle_lookup_reply(const frame_header& h, byte_reader& payload, int from);
    void handle_goodbye(const frame_header& h, byte_reader& payload, int from);
    // Fails every ask and lookup awaiting ended rank `r` (rank_end.cpp).
    void fail_awaiting(int r);
    const published* find_published(std::uint64_t id);
    void report_gone(const published& p, int from, std::string_view name);
    byte_buffer take_spare();

    world_options options_;
    std::unique_ptr<outbox[]> out_;
    // The engine's park counter (general select-node mode, shared with the
    // watched request futures): the engine decrements it before parking and
    // parks on a negative result; a waker increments it and unparks the
    // engine exactly when it brings it back to zero. Invariant: every park
    // is matched by exactly one unpark; a positive value is banked wakes.
    alignas(64) std::atomic<int> counter_{0};
    context* ctx_ = nullptr;
    std::atomic<bool> quit_{false};
    // Set by a direct send that found the engine asleep (and woke it): a
    // reply may be on its way, so the engine polls closely again.
    std::atomic<bool> kicked_{false};
    // Direct sends not yet complete (any outbox), for the engine.
    std::atomic<int> direct_pending_{0};
    std::thread thread_;

    // ---- progress by any thread (docs/remote.md, "Progress")
    // The progress token: whoever sets it runs a pass; the state below
    // marked "token holder only" is touched by the holder alone (the
    // exchange acquires, the clearing store releases it to the next one).
    alignas(64) std::atomic<bool> token_{false};
    // Polls by idle processors and actor workers (a heartbeat): the engine
    // thread steps aside while it moves.
    alignas(64) std::atomic<std::uint64_t> external_polls_{0};
    // When a pass last did work (steady clock, ns): the spin-down window.
    std::atomic<std::int64_t> last_activity_{0};
    // Asks and lookups awaiting their replies.
    std::atomic<int> awaiting_{0};
    // 1 while the engine sleeps in delegated_sleep (futex word); a poller
    // that stops polling (sleeping_hook) bumps poller_sleeps_, then clears
    // the word and wakes the engine: Dekker pair with delegated_sleep.
    alignas(64) std::atomic<std::uint32_t> handover_{0};
    std::atomic<std::uint64_t> poller_sleeps_{0};
    troupe::detail::idle_poller poller_{};
    bool hooked_ = false;
    // This rank's section of troupe::dump: asks awaiting replies from other
    // ranks, requests this rank owes a reply, published actors.
    troupe::detail::dump_section dump_{};
    static void write_dump(void* arg, std::ostream& os);

    // Token holder only (the engine thread or an idle poller).
    byte_buffer rbuf_;
    std::vector<in_flight> flying_;
    std::atomic<std::size_t> flying_count_{0};  // flying_.size(), for other threads
    std::vector<byte_buffer> spares_;
    pending_reply* replies_ = nullptr;
    byte_buffer pbuf_;  // frames a pass builds (scratch() while it runs)
    std::size_t reply_scan_due_ = 0;
    // Encoded replies that did not fit in their rank's unsent batch, in
    // the order they were ready (replies.cpp); held_count_ mirrors the
    // size for other threads (busy_sending, hot).
    struct held_reply {
        int to;
        byte_buffer frame;
    };
    std::vector<held_reply> held_replies_;
    std::atomic<std::size_t> held_count_{0};
    // The most bytes one batch (one MPI message) may hold: max_frame_size,
    // lowered only by tests (world::set_batch_limit_for_test).
    std::atomic<std::size_t> batch_limit_{max_frame_size};

public:
    void set_batch_limit_for_test(std::size_t n) noexcept {
        batch_limit_.store(n ? n : max_frame_size, std::memory_order_relaxed);
    }

private:
    // Asks awaiting replies: slot table with a free list (no allocation
    // once grown); id = generation << 32 | (index + 1).
    troupe::spinlock asks_lock_{"troupe::remote asks"};
    std::vector<ask_slot> asks_;
    std::uint32_t free_ask_ = 0;  // index + 1, 0: none
    // The request whose reply the engine is writing (set under asks_lock_
    // when its slot is taken, cleared with release after the write): a
    // destructor that finds its request here waits (abandon_ask).
    std::atomic<troupe::detail::request_tag*> completing_{nullptr};

    // Published actors (ids are index + 1) and names. The progress pass holds
    // the mutex from finding an actor to handing it a message (unpublish).
    std::mutex names_mutex_;
    std::vector<published> by_id_;
    std::unordered_map<std::string, std::uint64_t> by_name_;

    // Lookups awaiting answers.
    std::mutex lookups_mutex_;
    std::uint64_t next_lookup_ = 1;
    struct pending_lookup {
        int to;
        std::string name;
        std::function<void(const lookup_answer&)> done;
    };
    std::unordered_map<std::uint64_t, pending_lookup> lookups_;

    // Per rank: -1 while it runs; once it said goodbye, the number of
    // collectives it entered (seq_cst: Dekker pairs with register_ask and
    // lookup, see rank_end.cpp).
    std::unique_ptr<std::atomic<std::int64_t>[]> ended_;
    std::atomic<bool> ending_{false};  // this rank said goodbye
    // Whether the engine thread, polling while hot and alone, may keep the
    // CPU after a pass that did work (a spare core: set_binding).
    std::atomic<bool> spin_freely_{true};
    binding binding_;
    std::atomic<std::uint64_t> collectives_{0};  // entered on `collective`

    std::mutex raw_lock_;
};

/// The pair table (registry.cpp): deliver functions by (actor type, message name).
struct pair_info {
    std::string actor_type, msg_name;
    deliver_fn fn;
};
const pair_info* find_pair(std::uint64_t actor_key, std::uint64_t msg_key) noexcept;
/// The registered message names (registry.cpp): type spelling, or nullptr.
const std::string* registered_type(std::string_view name) noexcept;
/// Names registered for two different types (reported when a world starts).
std::vector<std::string> name_conflicts();

}  // namespace troupe::remote::detail
