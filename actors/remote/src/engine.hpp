#pragma once
// Internal: the progress engine of one rank, composed of parts that each
// own their state and lock (docs/remote.md, "Inside", has the map):
//   frames.hpp     frames and their codec, the batch parser (no MPI)
//   outboxes.hpp   outboxes, direct sends, batches in flight (MPI sends)
//   ask_table.hpp  asks awaiting replies: add, take, abandon, cancel (no MPI)
//   names.hpp      published actors and lookups awaiting answers (no MPI)
//   peers.hpp      which ranks have ended (no MPI)
//   progress.hpp   the progress policy: who polls when, the engine thread
// The engine wires them together: a pass (pass()) receives and handles
// inbound frames (inbound.cpp), ships replies (replies.cpp), flushes the
// outboxes and tests sends; ranks that end are in rank_end.cpp.
//
// Invariants of the composition:
//   - State marked "token holder only" is touched by the holder of the
//     progress token alone (one pass at a time, progress.hpp).
//   - A part's lock is never held while another part's is taken, except
//     name_table's mutex, held across a delivery into a mailbox (which
//     takes the mailbox's lock): no cycle, since nothing holding a mailbox
//     lock calls into the engine.
//   - Handlers the user gives (on_error, on_gone, on_rank_lost) and
//     decoders run on whichever thread runs the pass; they run with no
//     part's lock held.
#include "outboxes.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "ask_table.hpp"
#include "cycles.hpp"
#include "frames.hpp"
#include "names.hpp"
#include "peers.hpp"
#include "progress.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/blocked_behaviour.hpp"
#include "troupe/detail/dump_section.hpp"
#include "troupe/remote/detail/engine_api.hpp"
#include "troupe/remote/world.hpp"
#include "type_tables.hpp"
#include "watches.hpp"

namespace troupe::remote::detail {

/// Where this rank may spin (binding.cpp).
struct binding {
    int cpus = 0;       // CPUs in this rank's affinity mask
    int sharers = 1;    // ranks of this node whose masks overlap it (itself included)
    bool spare = true;  // a spinning poller takes no CPU another thread needs
};
/// Probes the affinity masks of this node's ranks (collective on
/// MPI_COMM_WORLD).
binding probe_binding();

/// The trampoline of a relay's down (a direct monitor entry, called on the
/// thread that ends the watched actor): engine::relay_fired, unless the
/// world is going away. Frees the down.
troupe::allocation relay_down(troupe::actor* a, troupe::message& m);

class engine {
public:
    engine(int rank, int size, world_options options);
    ~engine();  // stops the thread after the outboxes are sent
    engine(const engine&) = delete;

    const int rank, size;
    MPI_Comm comm;        // point-to-point batches (engine thread, direct senders)
    MPI_Comm collective;  // stop rounds and barriers (user threads)
    MPI_Comm final_comm;  // the world's last barrier only (~world)
    traffic_counts traffic;
    // Requests received and not yet replied to (the token holder writes).
    std::atomic<std::uint64_t> pending_replies{0};

    // ---- any thread
    void ship(int to, const byte_buffer& frame) { out_.ship(to, frame); }
    std::uint64_t register_ask(troupe::detail::request_tag& q, ask_complete_fn fn,
                               const ask_target& t);
    std::uint64_t register_ask(troupe::detail::request_tag& q, ask_complete_fn fn,
                               const ask_target& t, std::chrono::steady_clock::time_point when);
    std::exception_ptr ask_deadline_passed(const ask_target& t) noexcept;
    void cancel_ask(std::uint64_t id) noexcept { asks_.cancel(id); }
    // Request `q` (ask `id`) is being destroyed: forgets it, so that its
    // reply, if it comes, is dropped quietly; waits while the engine is
    // writing that reply into it.
    void abandon_ask(troupe::detail::request_tag& q, std::uint64_t id) noexcept {
        asks_.abandon(q, id);
    }
    void publish(std::string_view name, troupe::actor& a, std::string_view type) {
        names_.publish(name, a, type);
    }
    // `a` is being destroyed (~actor, through troupe::detail::unpublish_hook):
    // forgets it, waiting out a delivery to it in progress; later frames for
    // it are dropped as for an actor that is gone.
    void unpublish(troupe::actor& a) noexcept { names_.unpublish(a); }
    void lookup(int to, std::string_view name, std::function<void(const lookup_answer&)> done);
    // Bad input from rank `from`: to world_options::on_error, or stderr and
    // MPI_Abort.
    void report(int from, std::string type, const std::string& what);
    void send_raw(int to, const void* bytes, std::size_t n) { out_.send_raw(to, bytes, n); }
    // Whether an outbox to a live rank holds frames, a send to one is in
    // flight, or a reply is held.
    bool busy_sending() noexcept {
        return out_.busy() || held_count_.load(std::memory_order_seq_cst) != 0;
    }
    // Waits (sleeping) until busy_sending() is false.
    void drain_sends();
    void set_batch_limit_for_test(std::size_t n) noexcept { out_.set_batch_limit(n); }

    // Polls spin only with a spare core, else yield the CPU between polls
    // (binding.cpp); before any traffic.
    void set_binding(const binding& b) noexcept;
    const binding& cores() const noexcept { return binding_; }

    // ---- ranks that end (rank_end.cpp)
    // This rank's world is ending: tells every other rank (a goodbye frame
    // after everything sent to it), which then fails what awaits this rank.
    // `collectives`: how many collectives this rank entered on `collective`.
    void say_goodbye(std::uint64_t collectives) noexcept;
    bool ended(int r) const noexcept { return peers_.ended(r); }
    rank_lost lost_error(int r, const std::string& what) const {
        return peers_.lost_error(r, what);
    }
    // The next collective on `collective` (numbered from 1 on every rank,
    // so the k-th ones match); throws rank_lost if a rank that ended before
    // entering it is known already.
    std::uint64_t begin_collective(const char* what);
    int collective_blocked(std::uint64_t k) const noexcept { return peers_.collective_blocked(k); }
    std::uint64_t collectives_entered() const noexcept {
        return collectives_.load(std::memory_order_relaxed);
    }

    // ---- monitors across ranks (watch.cpp)
    // The stand-in of actor `id` on `to` (see watch_remote in engine_api.hpp).
    troupe::actor& watch_remote(int to, std::uint64_t id);
    troupe::actor* stand_in(int to, std::uint64_t id) noexcept { return watches_.find(to, id); }
    // A relay (the watched rank's side of a remote monitor) fired: ships the
    // down frame to the watcher's rank; the relay is freed later.
    struct relay final : troupe::actor {
        relay(int t, std::uint64_t k) noexcept
            : troupe::actor(troupe::detail::stand_in_t{}), to(t), token(k) {}
        const int to;               // the watcher's rank
        const std::uint64_t token;  // its stand-in's token there
    };
    void relay_fired(relay& r, const exit_reason& why) noexcept;

    // ---- replies to requests from other ranks
    void watch(pending_reply& p);
    context& waiter() noexcept { return *progress_.waker.ctx_; }
    std::atomic<int>& park_counter() noexcept { return progress_.waker.counter_; }

    // ---- for the progress policy
    // One pass (token holder): receive, ship replies, flush, test sends.
    bool pass() noexcept;
    // Whether some outbox holds frames (under their locks).
    bool work_queued() noexcept { return out_.any_queued(); }
    // Whether a send is incomplete or a reply held (hints).
    bool sends_pending() const noexcept {
        return out_.sends_pending() || held_count_.load(std::memory_order_relaxed) != 0;
    }
    bool ask_pending(std::uint64_t id) noexcept { return asks_.pending(id); }

    // ---- request cycles across ranks (probes.cpp)
    // The engine thread asks for a sweep every probe_interval while replies
    // are awaited; the next pass runs it.
    void request_probes() noexcept { probe_due_.store(true, std::memory_order_relaxed); }
    // The confirmed cycles through this rank's published actors whose waits
    // still hold (re-checked now), one line each; `complete` is false when
    // the table could not be held to re-check them (a delivery kept it).
    // Any thread; never blocks on a delivery. Throws std::bad_alloc.
    std::vector<std::string> cycles_now(bool& complete);
    // Probe frames this rank sent and received, cycles its probes confirmed.
    std::uint64_t probes_sent() const noexcept {
        return probes_sent_.load(std::memory_order_relaxed);
    }
    std::uint64_t probes_received() const noexcept {
        return probes_received_.load(std::memory_order_relaxed);
    }

private:
    // register_ask's body; `add` records the ask in the table.
    template <class Add>
    std::uint64_t register_ask(troupe::detail::request_tag& q, ask_complete_fn fn, int to,
                               std::string_view name, Add&& add);

    // ---- inbound (inbound.cpp), token holder only
    bool receive();
    static void loop_back(void* self, const char* p, std::size_t n);
    void parse(const char* p, std::size_t n, int from);
    void handle(const parsed_frame& f, int from);
    void handle_message(const parsed_frame& f, byte_reader& payload, int from);
    void handle_reply(const parsed_frame& f, byte_reader& payload, int from);
    void handle_lookup(const parsed_frame& f, byte_reader& payload, int from);
    void handle_lookup_reply(const parsed_frame& f, byte_reader& payload, int from);
    void handle_goodbye(const parsed_frame& f, byte_reader& payload, int from);
    void handle_watch(const parsed_frame& f, byte_reader& payload, int from);
    void handle_down(const parsed_frame& f, byte_reader& payload, int from);
    void handle_probe(const parsed_frame& f, byte_reader& payload, int from);
    // ---- request cycles across ranks (probes.cpp), token holder only
    // A probe to ship: to actor `target` of rank `to`.
    struct outgoing_probe {
        int to;
        std::uint64_t target;
        probe p;
    };
    // Sends a probe from each published actor blocked on an ask (at most
    // probes_per_sweep actors a sweep, in turn). Nothrow (a failure skips
    // the sweep).
    void sweep_probes() noexcept;
    // Follows probe `p` from blocked behaviour `b` (the one that keeps
    // actor `subject` from running: `self` names it) through this rank: to
    // the cycle's end (its initiator's wait: recorded in the book), to the
    // edge out of the rank (queued in `out`), or to a wait that is no ask
    // (dropped). Under names_.hold().
    void walk(probe& p, troupe::detail::blocked_behaviour b, const void* subject, std::string self,
              std::vector<outgoing_probe>& out);
    void ship_probes(std::vector<outgoing_probe>& out) noexcept;
    // Frees the relays that have fired (token holder, or ~engine).
    void free_fired_relays() noexcept;
    // report() of a frame of kind `what` whose payload did not decode.
    void report_malformed(int from, const char* what, const std::exception& e);
    void report_gone(const name_table::published& p, int from, std::string_view name);
    // Fails every ask and lookup awaiting ended rank `r` (rank_end.cpp).
    void fail_awaiting(int r);

    // ---- replies (replies.cpp), token holder only
    // Encodes and ships the replies whose futures were fulfilled.
    bool scan_replies();
    // Ships the encoded reply in `frame` to `to`, or holds it (taking the
    // buffer) while the batch for `to` is full or earlier replies are held;
    // drops pending_replies once it is queued.
    void ship_reply(int to, byte_buffer& frame) noexcept;
    // Ships held replies in order while they fit; true if it shipped any.
    bool ship_held_replies() noexcept;

    static void write_dump(void* arg, std::ostream& os);

    world_options options_;
    peer_states peers_;
    progress progress_{*this};
    outboxes out_;
    ask_table asks_{progress_.awaited};
    name_table names_;
    lookup_table lookups_{progress_.awaited};
    // Monitors: this rank's stand-ins for remote actors it watches, and the
    // relays watching its own actors for other ranks (watch.cpp: a relay is
    // in relays_ until it fires, then in fired_ until freed).
    watch_table watches_;
    std::mutex relays_mutex_;
    std::unordered_set<relay*> relays_;
    std::vector<relay*> fired_;

    // Token holder only.
    byte_buffer rbuf_;                  // the batch being received
    pending_reply* replies_ = nullptr;  // requests whose replies are watched
    // Encoded replies that did not fit in their rank's unsent batch, in
    // the order they were ready; held_count_ mirrors the size for other
    // threads (busy_sending, the hot test).
    struct held_reply {
        int to;
        byte_buffer frame;
    };
    std::vector<held_reply> held_replies_;
    std::atomic<std::size_t> held_count_{0};

    std::atomic<bool> ending_{false};  // this rank said goodbye
    // Request cycles across ranks: the book of this rank's probes, the
    // sweep's flag and turn (token holder), and the frame counts (dump).
    cycle_book cycles_;
    std::atomic<bool> probe_due_{false};
    std::uint64_t sweep_from_ = 1;
    std::atomic<std::uint64_t> probes_sent_{0}, probes_received_{0};
    binding binding_;
    std::atomic<std::uint64_t> collectives_{0};  // entered on `collective`
    // This rank's section of troupe::dump.
    troupe::detail::dump_section dump_{};
};

}  // namespace troupe::remote::detail
