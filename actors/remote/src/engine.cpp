// The engine: wires the parts (engine.hpp lists them) into one rank's
// progress engine, and holds what crosses parts: the library's entry points
// (engine_api.hpp), the hooks ~actor and ~request call, asks and lookups
// (which register, then ship), the pass, error reports and the dump.
#include "engine.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <thread>

#include "troupe/defaults/remote.hpp"
#include "troupe/detail/type_name.hpp"
#include "troupe/request_error.hpp"
#include "troupe/thread.hpp"

namespace troupe::remote::detail {

namespace cfg = troupe::defaults::remote;

// ---------------------------------------------------------------- entry points

void ship(engine& e, int rank, const byte_buffer& b) { e.ship(rank, b); }
std::uint64_t register_ask(engine& e, troupe::detail::request_tag& q, ask_complete_fn fn,
                           const ask_target& t) {
    return e.register_ask(q, fn, t);
}
std::uint64_t register_ask(engine& e, troupe::detail::request_tag& q, ask_complete_fn fn,
                           const ask_target& t, std::chrono::steady_clock::time_point when) {
    return e.register_ask(q, fn, t, when);
}
std::exception_ptr ask_deadline_passed(engine& e, const ask_target& t) noexcept {
    return e.ask_deadline_passed(t);
}
void cancel_ask(engine& e, std::uint64_t id) noexcept { e.cancel_ask(id); }
void watch(engine& e, pending_reply& p) { e.watch(p); }
void publish(engine& e, std::string_view name, troupe::actor& a, std::string_view type) {
    e.publish(name, a, type);
}
void lookup(engine& e, int rank, std::string_view name,
            std::function<void(const lookup_answer&)> done) {
    e.lookup(rank, name, std::move(done));
}
int engine_rank(const engine& e) noexcept { return e.rank; }

pending_reply::pending_reply(engine& e, int from_rank, std::uint64_t ask_token) noexcept
    : node(e.waiter(), status, e.park_counter()), from(from_rank), token(ask_token) {}

void describe_current_exception(std::string& type, std::string& what) {
    type = "unknown exception";
    if (const std::type_info* t = abi::__cxa_current_exception_type())
        type = troupe::detail::demangle(t->name());
    try {
        throw;
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
        what = "(not a std::exception)";
    }
}

// ---------------------------------------------------------------- hooks

namespace {
// The world's engine (one per process), for the destroy hooks below.
std::atomic<engine*> live_engine{nullptr};

// ~actor of a published actor (troupe::detail::unpublish_hook), and ~request
// of a remote ask (request_tag::on_destroy). The mutex orders both with the
// engine's destruction (which clears live_engine under it): an actor or a
// request outliving its world finds no engine and has nothing to undo, and
// no hook runs on an engine being destroyed. Neither call parks (a short
// lock; at most a wait for a reply write in progress, which takes no lock).
std::mutex hooks_mutex;
void on_actor_destroyed(troupe::actor& a) noexcept {
    std::lock_guard g{hooks_mutex};
    if (engine* e = live_engine.load(std::memory_order_acquire)) e->unpublish(a);
}
void abandon_hook(troupe::detail::request_tag& q, std::uint64_t id) noexcept {
    std::lock_guard g{hooks_mutex};
    if (engine* e = live_engine.load(std::memory_order_acquire)) e->abandon_ask(q, id);
}

// Relays running relay_down now (a Dekker pair with ~engine: they count
// themselves, then load live_engine; ~engine clears live_engine, then waits
// for the count to drop to zero before it frees relays).
std::atomic<int> relays_running{0};

MPI_Comm dup_world() {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    return c;
}
}  // namespace

troupe::allocation relay_down(troupe::actor* a, troupe::message& m) {
    auto& d = static_cast<troupe::down&>(m);
    relays_running.fetch_add(1, std::memory_order_seq_cst);
    // Null once ~engine began: the relay may be freed, so it is not read.
    if (engine* e = live_engine.load(std::memory_order_seq_cst))
        e->relay_fired(static_cast<engine::relay&>(*a), d.reason);
    relays_running.fetch_sub(1, std::memory_order_seq_cst);
    delete &d;
    return troupe::Nodelete;
}

// ---------------------------------------------------------------- life

engine::engine(int r, int n, world_options options)
    : rank(r),
      size(n),
      comm(dup_world()),
      collective(dup_world()),
      final_comm(dup_world()),
      options_(std::move(options)),
      peers_(r, n),
      out_(r, n, comm, peers_, progress_.waker, traffic, &engine::loop_back, this),
      names_(r) {
    progress_.start();
    live_engine.store(this, std::memory_order_release);
    troupe::detail::unpublish_hook = &on_actor_destroyed;  // before any publish
    dump_.write = &engine::write_dump;
    dump_.arg = this;
    troupe::detail::add_dump_section(dump_);
}

engine::~engine() {
    troupe::detail::remove_dump_section(dump_);  // no dump reads a rank that is going away
    progress_.unhook();                          // no idle thread runs a pass from here on
    {
        std::lock_guard g{hooks_mutex};  // an actor's destructor may be unpublishing it
        live_engine.store(nullptr, std::memory_order_seq_cst);
    }
    // A relay firing now (an actor of this rank ending on a worker) may
    // still use the engine and its relay: wait it out (it ships one frame).
    while (relays_running.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    progress_.stop();
    out_.finish();
    if (!options_.on_gone) {  // the default report named each gone actor once; sum up the rest
        for (const name_table::published& p : names_.all())
            if (p.dropped > 1)
                std::fprintf(stderr,
                             "troupe::remote: rank %d: %llu message(s) in all were dropped for "
                             "actor \"%s\" (type %s), which %s\n",
                             rank, static_cast<unsigned long long>(p.dropped), p.name.c_str(),
                             p.type.c_str(), p.a ? "had finished" : "was destroyed");
    }
    // Monitors of remote actors that never heard of their end: this rank
    // hears no more (rank_lost); relays still watching go (their entries
    // leave the watched actors' records).
    watches_.end_all();
    free_fired_relays();
    for (relay* r : relays_) delete r;
    relays_.clear();
    while (replies_) {  // requests never replied to: nobody waits here any more
        pending_reply* p = replies_;
        replies_ = p->next;
        p->reply_future().unregister_select(p->node);
        p->recycle();
    }
    MPI_Comm_free(&comm);
    MPI_Comm_free(&collective);
    MPI_Comm_free(&final_comm);
}

// ---------------------------------------------------------------- asks and lookups

namespace {
std::string timeout_text(const ask_target& t, std::chrono::steady_clock::duration after,
                         const char* how) {
    char when[64];
    std::snprintf(when, sizeof when, "%.3g ms",
                  std::chrono::duration<double, std::milli>(after).count());
    return "troupe::remote: ask of request '" + std::string{t.message} + "' to actor of type " +
           troupe::detail::user_type_name(t.actor_type) + " (id " + std::to_string(t.id) +
           ") on rank " + std::to_string(t.rank) + " " + how + " (deadline " + when +
           " after the ask)";
}
}  // namespace

std::uint64_t engine::register_ask(troupe::detail::request_tag& q, ask_complete_fn fn,
                                   const ask_target& t,
                                   std::chrono::steady_clock::time_point when) {
    const auto now = std::chrono::steady_clock::now();
    std::string what = timeout_text(t, when - now, "timed out");
    return register_ask(q, fn, t.rank, t.message, [&] {
        return asks_.add(q, fn, t.rank, t.message, when, std::move(what),
                         ask_label{t.reply, t.id, t.actor_type});
    });
}

std::exception_ptr engine::ask_deadline_passed(const ask_target& t) noexcept {
    asks_.note_timed_out();
    try {
        return std::make_exception_ptr(troupe::request_error(
            troupe::request_error::reason::timeout,
            timeout_text(t, {}, "not sent: its deadline had already passed")));
    } catch (...) {
        return std::current_exception();  // std::bad_alloc: still an answer
    }
}

std::uint64_t engine::register_ask(troupe::detail::request_tag& q, ask_complete_fn fn,
                                   const ask_target& t) {
    return register_ask(q, fn, t.rank, t.message, [&] {
        return asks_.add(q, fn, t.rank, t.message, ask_label{t.reply, t.id, t.actor_type});
    });
}

template <class Add>
std::uint64_t engine::register_ask(troupe::detail::request_tag& q, ask_complete_fn, int to,
                                   std::string_view name, Add&& add) {
    if (to < 0 || to >= size)
        throw std::out_of_range("troupe::remote: rank " + std::to_string(to) +
                                " does not exist (the job has " + std::to_string(size) + " ranks)");
    // Counted awaited before the frame is shipped: the reply is polled for
    // closely.
    const std::uint64_t id = add();
    // Dekker with handle_goodbye (it marks the rank ended, then takes the
    // asks awaiting it; add() filled the slot, then we load the state, both
    // seq_cst): either we see the rank ended here, or its scan finds our
    // slot and fails it. Both may happen: whoever takes the slot first
    // answers, the other finds nothing.
    if (ended(to)) {
        asks_.cancel(id);  // unless the goodbye's scan took it
        throw lost_error(to, "ask \"" + std::string{name} + "\"");
    }
    progress::note_ask(*this, id);
    // The asker's thread owns q until the frame is shipped: no race here.
    q.on_destroy = &abandon_hook;
    q.on_destroy_arg = id;
    return id;
}

void engine::lookup(int to, std::string_view name, std::function<void(const lookup_answer&)> done) {
    if (to < 0 || to >= size)
        throw std::out_of_range("troupe::remote: rank " + std::to_string(to) +
                                " does not exist (the job has " + std::to_string(size) + " ranks)");
    const std::uint64_t id = lookups_.add(to, name, std::move(done));
    try {
        // Dekker with handle_goodbye, as in register_ask: registered above,
        // then the rank's state loaded inside ship.
        byte_buffer& b = scratch();
        begin_frame(b, frame_kind::lookup, "", 0, 0, id);
        byte_writer w{b};
        put(w, std::string{name});
        end_frame(b);
        ship(to, b);
    } catch (const rank_lost& e) {
        // The rank has ended: the lookup fails at once, through its future
        // (unless the goodbye's scan failed it already).
        if (auto f = lookups_.take(id)) {
            lookup_answer a;
            a.lost = e.what();
            f(a);
        }
    } catch (...) {
        (void)lookups_.take(id);
        throw;
    }
}

void engine::watch(pending_reply& p) {
    p.next = replies_;
    replies_ = &p;
    pending_replies.fetch_add(1, std::memory_order_seq_cst);
    // Returns true only if already fulfilled (the status is then `sat` and
    // the next scan ships the reply).
    (void)p.reply_future().register_select(p.node);
}

// ---------------------------------------------------------------- the pass

bool engine::pass() noexcept {
    bool did = receive();
    // Asked for by the engine thread every probe_interval while replies
    // are awaited (not counted as activity: a sweep alone must not keep
    // the rank polling closely).
    if (probe_due_.load(std::memory_order_relaxed) &&
        probe_due_.exchange(false, std::memory_order_relaxed))
        sweep_probes();
    if (!held_replies_.empty()) did |= ship_held_replies();
    if (replies_) did |= scan_replies();
    did |= out_.flush();
    if (out_.flying()) did |= out_.complete_sends();
    if (out_.direct_pending()) did |= out_.complete_direct();
    return did;
}

void engine::drain_sends() {
    auto poll = cfg::collective_first_poll;
    while (busy_sending()) {
        troupe::this_thread::sleep_for(poll);
        poll = std::min(poll * 2, cfg::collective_max_poll);
    }
}

// ---------------------------------------------------------------- reports

void engine::report(int from, std::string type, const std::string& what) {
    network_error e{from, std::move(type), what};
    if (options_.on_error) {
        try {
            options_.on_error(e);
        } catch (...) {}
        return;
    }
    std::fprintf(stderr, "%s\n(troupe::remote: aborting the job: bad input from the network)\n",
                 e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

// Runs under core's registry lock, on the dumping thread (dump_section.hpp):
// it takes only the asks spinlock, which nobody holds across a park, and
// only tries the names mutex (a delivery may hold it).
void engine::write_dump(void* arg, std::ostream& os) {
    engine& e = *static_cast<engine*>(arg);
    std::size_t asks = 0, abandoned = 0;
    e.asks_.count(asks, abandoned);
    os << "troupe-remote: rank " << e.rank << " of " << e.size << "\n";
    os << "  remote asks outstanding (sent from this rank, no reply yet): " << asks << "\n";
    if (abandoned)
        os << "  abandoned asks whose replies have not come (dropped when they do): " << abandoned
           << "\n";
    // What keeps the engine polling closely (abandoned asks do not).
    os << "  replies awaited (asks and lookups not given up): "
       << e.progress_.awaited.load(std::memory_order_relaxed) << "\n";
    if (const auto t = e.asks_.timed_out())
        os << "  remote asks timed out: " << t
           << " (late replies dropped: " << e.asks_.late_replies() << ")\n";
    os << "  requests from other ranks not yet replied to: "
       << e.pending_replies.load(std::memory_order_relaxed) << "\n";
    os << "  frames sent / received: " << e.traffic.frames_sent.load(std::memory_order_relaxed)
       << " / " << e.traffic.frames_received.load(std::memory_order_relaxed) << "\n";
    std::size_t watched = 0, watched_ended = 0;
    if (e.watches_.count(watched, watched_ended) && watched)
        os << "  remote actors monitored from this rank: " << watched << " (" << watched_ended
           << " ended)\n";
    if (const std::uint64_t sent = e.probes_sent(), got = e.probes_received(); sent || got)
        os << "  request-cycle probes sent / received: " << sent << " / " << got << "\n";
    // Request cycles across ranks through this rank's actors, each
    // re-checked now (probes.cpp).
    try {
        bool complete = true;
        for (const std::string& c : e.cycles_now(complete)) os << "  " << c << "\n";
        if (!complete)
            os << "  request cycles across ranks: not re-checked (a delivery holds the table)\n";
    } catch (...) {
        os << "  request cycles across ranks: not listed (out of memory)\n";
    }
    if (std::size_t live = 0; e.names_.try_count_live(live))
        os << "  published actors: " << live << "\n";
    else os << "  published actors: (not counted: a delivery holds the table)\n";
}

}  // namespace troupe::remote::detail
