// The progress engine: one thread per rank that moves batches of frames
// between ranks with non-blocking MPI, helped by idle processors and actor
// workers (core's idle poller), and sleeps when there is nothing to do. The
// policy (who polls when, and when nobody does) is in docs/remote.md,
// "Progress".
#include "engine.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <mutex>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "troupe/defaults/remote.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/thread.hpp"

namespace troupe::remote::detail {

namespace cfg = troupe::defaults::remote;

// ---------------------------------------------------------------- frames

namespace {
std::int64_t clock_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
// While this kernel thread runs a progress pass: the engine's frame buffer.
// A pass may run on any idle thread, whose own scratch buffer may hold the
// frame of a user thread switched out on it; the pass's frames go to the
// token holder's buffer instead.
thread_local byte_buffer* pass_buffer = nullptr;
// The engine whose thread this is: it polls in its own loop, and its own
// park() spin must not count as another thread polling.
thread_local const engine* engine_thread = nullptr;
// The last ask sent from this kernel thread (awaited_hook: an OS thread
// parking for its reply keeps polling for it).
thread_local const engine* asked_engine = nullptr;
thread_local std::uint64_t asked_id = 0;
}  // namespace

byte_buffer& scratch() noexcept {
    if (pass_buffer) return *pass_buffer;
    thread_local byte_buffer b;
    return b;
}

void begin_frame(byte_buffer& b, frame_kind k, std::string_view name, std::uint64_t key,
                 std::uint64_t target, std::uint64_t token) {
    b.clear();
    frame_header h{};
    h.kind = static_cast<std::uint16_t>(k);
    h.name_len = static_cast<std::uint16_t>(name.size());
    h.magic = frame_magic;
    h.target = target;
    h.token = token;
    h.type_key = key;
    b.append(&h, sizeof h);
    b.append(name.data(), name.size());
}

void check_frame_size(std::size_t bytes, std::string_view name) {
    if (bytes > max_frame_size)
        throw std::length_error(
            "troupe::remote: message \"" + std::string{name} + "\" encodes to a frame of " +
            std::to_string(bytes) + " bytes, over the limit of " + std::to_string(max_frame_size) +
            " (frame sizes are 32-bit, MPI counts int); send it in smaller parts");
}

void end_frame(byte_buffer& b) {
    frame_header h;
    std::memcpy(&h, b.data(), sizeof h);
    // Before the 32-bit fields below are computed (padded size, in size_t).
    check_frame_size((b.size() + 7) & ~std::size_t{7},
                     std::string_view{b.data() + sizeof h, h.name_len});
    h.payload_len = static_cast<std::uint32_t>(b.size() - sizeof h - h.name_len);
    const std::uint32_t total = align8(b.size());
    if (total > b.size()) b.grow(total - b.size());
    h.size = total;
    std::memcpy(b.data(), &h, sizeof h);
}

void ship(engine& e, int rank, const byte_buffer& b) { e.ship(rank, b); }
std::uint64_t register_ask(engine& e, troupe::detail::request_tag& q, ask_complete_fn fn, int rank,
                           std::string_view name) {
    return e.register_ask(q, fn, rank, name);
}
void cancel_ask(engine& e, std::uint64_t id) noexcept { e.cancel_ask(id); }

namespace {
// The world's engine (one per process), for the requests' destroy hook.
std::atomic<engine*> live_engine{nullptr};

void abandon_hook(troupe::detail::request_tag& q, std::uint64_t id) noexcept;

// ~actor of a published actor (troupe::detail::unpublish_hook). The mutex
// orders it with the engine's destruction (which clears live_engine under
// it): an actor outliving its world finds no engine and has nothing to undo.
std::mutex unpublish_mutex;
void on_actor_destroyed(troupe::actor& a) noexcept {
    std::lock_guard g{unpublish_mutex};
    if (engine* e = live_engine.load(std::memory_order_acquire)) e->unpublish(a);
}

// ~request of a remote ask. Under the same mutex as above: the engine
// cannot be destroyed while abandon_ask runs (~engine clears live_engine
// under it first), and a request destroyed after its world finds nothing.
// abandon_ask never parks (a short spinlock; at most a wait for a reply
// write in progress, which needs no lock).
void abandon_hook(troupe::detail::request_tag& q, std::uint64_t id) noexcept {
    std::lock_guard g{unpublish_mutex};
    if (engine* e = live_engine.load(std::memory_order_acquire)) e->abandon_ask(q, id);
}
}  // namespace
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

namespace {

// The type name and what() of the exception being handled.
std::pair<std::string, std::string> describe_current() {
    std::pair<std::string, std::string> r;
    try {
        throw;
    } catch (const captured_error& c) {  // recorded on the worker thread
        r = {c.type, c.what};
    } catch (...) {
        describe_current_exception(r.first, r.second);
    }
    return r;
}

std::string quoted(std::string_view s) { return "\"" + std::string{s} + "\""; }

// Takes an outbox lock from a sending thread without ever switching user
// threads. The frame being shipped lives in the calling kernel thread's
// scratch buffer (scratch()). troupe::spinlock's slow path yields a user
// thread's processor: another user thread on this kernel thread could then
// build its own frame in the same buffer, and the first, resumed (perhaps on
// another kernel thread), would ship that frame instead of its own: one
// message twice, the other never (the remote asks that hung under TSan).
// Invariant: nothing between begin_frame and the append below can switch the
// calling user thread out. Holders keep the lock for an append, a swap or
// one MPI_Isend and never park or yield meanwhile, so spinning (then
// yielding the kernel thread to the OS) always ends.
void lock_no_switch(troupe::spinlock& l) noexcept {
    for (int spins = 0; !l.try_lock(); ++spins) {
        if (spins < 64) troupe::detail::cpu_relax();
        else std::this_thread::yield();  // the kernel thread, never the user thread
    }
}

}  // namespace

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

// ---------------------------------------------------------------- engine

engine::engine(int r, int n, world_options options)
    : rank(r),
      size(n),
      options_(std::move(options)),
      out_(new outbox[static_cast<std::size_t>(n)]),
      ended_(new std::atomic<std::int64_t>[static_cast<std::size_t>(n)]) {
    for (int r = 0; r < n; ++r) ended_[static_cast<std::size_t>(r)].store(-1);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &collective);
    MPI_Comm_dup(MPI_COMM_WORLD, &final_comm);
    // Idle processors and actor workers of this process poll for us
    // (troupe/detail/idle_poll.hpp). Without the hook (the table is full)
    // the engine thread alone polls: slower, still correct.
    poller_ = troupe::detail::idle_poller{&engine::poll_hook, &engine::sleeping_hook, this,
                                          &engine::awaited_hook};
    try {
        troupe::detail::add_idle_poller(poller_);
        hooked_ = true;
    } catch (...) {}
    std::promise<void> started;
    thread_ = std::thread([this, &started] {
        ctx_ = &this_context();
        engine_thread = this;
        started.set_value();
        run();
    });
    started.get_future().wait();
    live_engine.store(this, std::memory_order_release);
    troupe::detail::unpublish_hook = &on_actor_destroyed;  // before any publish
    dump_.write = &engine::write_dump;
    dump_.arg = this;
    troupe::detail::add_dump_section(dump_);
}

// Runs under core's registry lock, on the dumping thread (dump_section.hpp):
// it takes only the asks spinlock, which nobody holds across a park, and
// only tries the names mutex, a bounded number of times (a progress pass
// may hold it while it delivers).
void engine::write_dump(void* arg, std::ostream& os) {
    engine& e = *static_cast<engine*>(arg);
    std::size_t asks = 0, abandoned = 0;
    e.asks_lock_.lock();
    for (const ask_slot& s : e.asks_) {
        if (s.q) ++asks;
        else if (s.abandoned) ++abandoned;
    }
    e.asks_lock_.unlock();
    os << "troupe-remote: rank " << e.rank << " of " << e.size << "\n";
    os << "  remote asks outstanding (sent from this rank, no reply yet): " << asks << "\n";
    if (abandoned)
        os << "  abandoned asks whose replies have not come (dropped when they do): " << abandoned
           << "\n";
    // What keeps the engine polling closely (abandoned asks do not).
    os << "  replies awaited (asks and lookups not given up): "
       << e.awaiting_.load(std::memory_order_relaxed) << "\n";
    os << "  requests from other ranks not yet replied to: "
       << e.pending_replies.load(std::memory_order_relaxed) << "\n";
    os << "  frames sent / received: " << e.frames_sent.load(std::memory_order_relaxed) << " / "
       << e.frames_received.load(std::memory_order_relaxed) << "\n";
    // The progress pass holds the table only from finding an actor to
    // appending to its mailbox (never across a park): a few tries get it.
    bool got = false;
    for (int i = 0; i < 1000 && !(got = e.names_mutex_.try_lock()); ++i) std::this_thread::yield();
    if (got) {
        std::size_t live = 0;
        for (const published& p : e.by_id_)
            if (p.a) ++live;
        e.names_mutex_.unlock();
        os << "  published actors: " << live << "\n";
    } else {
        os << "  published actors: (not counted: a delivery holds the table)\n";
    }
}

engine::~engine() {
    troupe::detail::remove_dump_section(dump_);  // no dump reads a rank that is going away
    // First: no idle thread runs a pass any more once this returns.
    if (hooked_) troupe::detail::remove_idle_poller(poller_);
    {
        std::lock_guard g{unpublish_mutex};  // an actor's destructor may be unpublishing it
        live_engine.store(nullptr, std::memory_order_release);  // no reply comes any more
    }
    quit_.store(true, std::memory_order_seq_cst);
    // Unconditional wake: the engine either sees quit_ before parking
    // (work_queued) or is parked and this increment brings the counter to 0.
    if (counter_.fetch_add(1, std::memory_order_seq_cst) + 1 == 0) unpark(*ctx_);
    wake_delegated();  // or it sleeps while others poll: quit_ is set first
    thread_.join();
    for (int r = 0; r < size; ++r) {  // the world drained them; a direct send still owns its buffer
        outbox& o = out_[static_cast<std::size_t>(r)];
        if (o.direct_req == MPI_REQUEST_NULL) continue;
        if (!ended(r)) {
            MPI_Wait(&o.direct_req, MPI_STATUS_IGNORE);
        } else {
            // Nobody receives it any more: let MPI forget it and keep its
            // buffer (MPI may still read it).
            MPI_Request_free(&o.direct_req);
            (void)new byte_buffer(std::move(o.direct_buf));
        }
    }
    for (in_flight& f : flying_) {  // batches to ended ranks (the others completed)
        MPI_Request_free(&f.req);
        (void)new byte_buffer(std::move(f.buf));
    }
    if (!options_.on_gone) {  // the default report named each gone actor once; sum up the rest
        for (const published& p : by_id_)
            if (p.dropped > 1)
                std::fprintf(stderr,
                             "troupe::remote: rank %d: %llu message(s) in all were dropped for "
                             "actor \"%s\" (type %s), which %s\n",
                             rank, static_cast<unsigned long long>(p.dropped), p.name.c_str(),
                             p.type.c_str(), p.a ? "had finished" : "was destroyed");
    }
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

void engine::ship(int to, const byte_buffer& frame) {
    std::size_t queued = 0;
    if (!ship_or_full(to, frame, queued))
        throw std::length_error("troupe::remote: " + std::to_string(queued) +
                                " bytes wait unsent for rank " + std::to_string(to) +
                                "; this frame would take the batch over the " +
                                std::to_string(batch_limit_.load(std::memory_order_relaxed)) +
                                "-byte limit of one MPI message");
}

bool engine::ship_or_full(int to, const byte_buffer& frame, std::size_t& queued) {
    if (to < 0 || to >= size)
        throw std::out_of_range("troupe::remote: rank " + std::to_string(to) +
                                " does not exist (the job has " + std::to_string(size) + " ranks)");
    if (ended(to)) throw lost_error(to, "a message for it");
    outbox& o = out_[static_cast<std::size_t>(to)];
    lock_no_switch(o.lock);  // not o.lock.lock(): see lock_no_switch
    // Per-pair FIFO: every MPI send to `to` is posted under this lock, in
    // the order the frames were shipped (a direct post only when no earlier
    // frame waits in the outbox; the engine posts a batch under the lock
    // too), and MPI does not let a message overtake one posted before it
    // (same source, destination, communicator and tag).
    if (cfg::direct_send && to != rank && o.buf.empty()) {
        bool posted;
        try {
            posted = post_direct(o, to, frame);
        } catch (...) {
            o.lock.unlock();
            throw;
        }
        if (posted) {
            o.lock.unlock();
            // Dekker with idle_sleep (as for outbox frames, with a flag):
            // we store kicked_, then read the counter; the engine announces
            // (decrements), then reads kicked_. Either it stays awake and
            // polls closely (a reply may come back; an incomplete send needs
            // testing), or it is asleep and we wake it.
            kicked_.store(true, std::memory_order_seq_cst);
            wake();
            return true;
        }
    }
    if (o.buf.size() + frame.size() >
        batch_limit_.load(std::memory_order_relaxed)) {  // one batch is one MPI message
        queued = o.buf.size();
        o.lock.unlock();
        return false;
    }
    try {
        o.buf.append(frame.data(), frame.size());
    } catch (...) {
        o.lock.unlock();
        throw;
    }
    ++o.frames;
    o.bytes.store(o.buf.size(), std::memory_order_seq_cst);
    o.lock.unlock();
    wake();
    return true;
}

bool engine::post_direct(outbox& o, int to, const byte_buffer& frame) {
    // Under o.lock with o.buf empty: nothing shipped to `to` before us is
    // still unposted, so posting now keeps the order.
    if (o.direct_req != MPI_REQUEST_NULL) {
        int done = 0;
        MPI_Test(&o.direct_req, &done, MPI_STATUS_IGNORE);
        if (!done) return false;  // its buffer is still MPI's: use the outbox
        o.direct_busy.store(false, std::memory_order_seq_cst);
        direct_pending_.fetch_sub(1, std::memory_order_relaxed);
    }
    o.direct_buf.clear();
    o.direct_buf.append(frame.data(), frame.size());  // may throw: nothing posted
    // Counted as sent before it is posted (a termination round that could
    // see it received also sees it sent).
    batches_sent.fetch_add(1, std::memory_order_seq_cst);
    frames_sent.fetch_add(1, std::memory_order_relaxed);
    MPI_Isend(o.direct_buf.data(), static_cast<int>(o.direct_buf.size()), MPI_BYTE, to, data_tag,
              comm, &o.direct_req);
    int done = 0;
    MPI_Test(&o.direct_req, &done, MPI_STATUS_IGNORE);  // small frames complete at once (eager)
    if (!done) {
        // The engine tests it from now on (complete_direct).
        direct_pending_.fetch_add(1, std::memory_order_relaxed);
        o.direct_busy.store(true, std::memory_order_seq_cst);
    }
    return true;
}

bool engine::complete_direct() {
    bool did = false;
    for (int r = 0; r < size; ++r) {
        outbox& o = out_[static_cast<std::size_t>(r)];
        if (!o.direct_busy.load(std::memory_order_relaxed)) continue;  // a hint; set under the lock
        o.lock.lock();
        if (o.direct_req != MPI_REQUEST_NULL) {
            int done = 0;
            MPI_Test(&o.direct_req, &done, MPI_STATUS_IGNORE);
            if (done) {
                o.direct_busy.store(false, std::memory_order_seq_cst);
                direct_pending_.fetch_sub(1, std::memory_order_relaxed);
                did = true;
            }
        }
        o.lock.unlock();
    }
    return did;
}

void engine::wake() noexcept {
    // Dekker with idle_sleep: we appended under the outbox lock, then read
    // the counter; the engine decrements the counter, then checks the
    // outboxes under their locks. Either it sees our frame, or its check
    // (and so its decrement) came first and we see a negative count here.
    if (counter_.load(std::memory_order_seq_cst) < 0 &&
        counter_.fetch_add(1, std::memory_order_seq_cst) + 1 == 0)
        unpark(*ctx_);  // we brought it back to zero: the one unpark owed
}

std::uint64_t engine::register_ask(troupe::detail::request_tag& q, ask_complete_fn fn, int to,
                                   std::string_view name) {
    if (to < 0 || to >= size)
        throw std::out_of_range("troupe::remote: rank " + std::to_string(to) +
                                " does not exist (the job has " + std::to_string(size) + " ranks)");
    asks_lock_.lock();
    std::uint32_t idx;
    if (free_ask_ != 0) {
        idx = free_ask_ - 1;
        free_ask_ = asks_[idx].next_free;
    } else {
        try {
            asks_.emplace_back();
        } catch (...) {
            asks_lock_.unlock();
            throw;
        }
        idx = static_cast<std::uint32_t>(asks_.size() - 1);
    }
    ask_slot& s = asks_[idx];
    s.q = &q;
    s.fn = fn;
    s.to = to;
    s.name = name;
    ++s.generation;
    const std::uint64_t id = (std::uint64_t{s.generation} << 32) | (idx + 1);
    asks_lock_.unlock();
    // Dekker with handle_goodbye (it stores ended_, then scans the slots
    // under asks_lock_; we fill the slot under the lock, then load ended_,
    // both seq_cst): either we see the rank ended here, or its scan finds
    // our slot and fails it. Both may happen: whoever takes the slot first
    // answers, the other finds nothing (cancel_ask) or a request already
    // answered (reply_exception does nothing).
    // Before the frame is shipped: the reply is polled for closely.
    awaiting_.fetch_add(1, std::memory_order_seq_cst);
    if (ended(to)) {
        cancel_ask(id);  // uncounts it, unless the goodbye scan took (and uncounted) it
        throw lost_error(to, "ask " + quoted(name));
    }
    asked_engine = this;
    asked_id = id;
    // The asker's thread owns q until the frame is shipped: no race here.
    q.on_destroy = &abandon_hook;
    q.on_destroy_arg = id;
    return id;
}

void engine::abandon_ask(troupe::detail::request_tag& q, std::uint64_t id) noexcept {
    const std::uint32_t idx = static_cast<std::uint32_t>(id & 0xffffffffu) - 1;
    asks_lock_.lock();
    if (idx < asks_.size() && asks_[idx].generation == (id >> 32) && asks_[idx].q == &q) {
        // Still waiting: the reply will find the slot abandoned. Nobody
        // awaits it any more: it no longer keeps the engine polling closely
        // (a reply that never comes would have kept a core spinning).
        asks_[idx].q = nullptr;
        asks_[idx].abandoned = true;
        asks_lock_.unlock();
        awaiting_.fetch_sub(1, std::memory_order_seq_cst);
        return;
    }
    // Either answered, or the engine took the slot and is writing the reply
    // now (it set completing_ under this lock): wait for the end of that
    // write, which is short and never parks. Acquire on every load, and
    // every store to completing_ is a release: whichever value we read
    // (nullptr after our write, or a later ask's request) was stored after
    // the write into `q` ended, so the destructor that follows sees the
    // whole write (no data race with request::publish).
    const bool writing = completing_.load(std::memory_order_acquire) == &q;
    asks_lock_.unlock();
    if (writing)
        while (completing_.load(std::memory_order_acquire) == &q) std::this_thread::yield();
}

void engine::cancel_ask(std::uint64_t id) noexcept {
    const std::uint32_t idx = static_cast<std::uint32_t>(id & 0xffffffffu) - 1;
    asks_lock_.lock();
    bool found = false;
    if (idx < asks_.size() && asks_[idx].generation == (id >> 32) && asks_[idx].q) {
        asks_[idx].q = nullptr;
        asks_[idx].next_free = free_ask_;
        free_ask_ = idx + 1;
        found = true;
    }
    asks_lock_.unlock();
    if (found) awaiting_.fetch_sub(1, std::memory_order_seq_cst);
}

void engine::publish(std::string_view name, troupe::actor& a, std::string_view type) {
    std::lock_guard g{names_mutex_};
    std::string n{name};
    if (by_name_.count(n))
        throw std::invalid_argument("troupe::remote: rank " + std::to_string(rank) +
                                    " already publishes an actor as " + quoted(name));
    by_id_.push_back(published{&a, n, std::string{type}, name_key(type)});
    by_name_.emplace(std::move(n), by_id_.size());
    troupe::detail::publish_access::mark(a);  // ~actor will call unpublish
}

void engine::unpublish(troupe::actor& a) noexcept {
    // Under names_mutex_, which the progress pass holds from finding an
    // actor to handing it a message: once this returns no pass touches `a`.
    std::lock_guard g{names_mutex_};
    for (published& p : by_id_) {
        if (p.a != &a) continue;
        p.a = nullptr;           // gone: later frames for it are reported as such
        by_name_.erase(p.name);  // lookups fail; the name may be published again
    }
}

void engine::report_gone(const published& p, int from, std::string_view name) {
    const std::string what = "troupe::remote: rank " + std::to_string(rank) + " dropped message " +
                             quoted(name) + " from rank " + std::to_string(from) + " for actor " +
                             quoted(p.name) + " (type " + p.type + "), which " +
                             (p.a ? "has finished" : "was destroyed") +
                             " (published there, and gone; the sender is not at fault)";
    actor_gone e{rank, p.name, p.type, std::string{name}, what};
    if (options_.on_gone) {
        try {
            options_.on_gone(e);
        } catch (...) {}
        return;
    }
    if (p.dropped == 1) {  // once per actor; ~engine sums up the rest
        std::fprintf(stderr, "%s\n", e.what());
        std::fflush(stderr);
    }
}

void engine::lookup(int to, std::string_view name, std::function<void(const lookup_answer&)> done) {
    if (to < 0 || to >= size)
        throw std::out_of_range("troupe::remote: rank " + std::to_string(to) +
                                " does not exist (the job has " + std::to_string(size) + " ranks)");
    std::uint64_t id;
    {
        std::lock_guard g{lookups_mutex_};
        id = next_lookup_++;
        lookups_.emplace(id, pending_lookup{to, std::string{name}, std::move(done)});
    }
    awaiting_.fetch_add(1, std::memory_order_seq_cst);
    // Takes the lookup back if nobody answered it yet (the goodbye scan may
    // have); returns its callback, or an empty one.
    auto take_back = [&] {
        std::function<void(const lookup_answer&)> f;
        std::lock_guard g{lookups_mutex_};
        if (auto it = lookups_.find(id); it != lookups_.end()) {
            f = std::move(it->second.done);
            lookups_.erase(it);
            awaiting_.fetch_sub(1, std::memory_order_seq_cst);
        }
        return f;
    };
    try {
        // Dekker with handle_goodbye, as in register_ask: registered above,
        // then the ended_ load inside ship.
        byte_buffer& b = scratch();
        begin_frame(b, frame_kind::lookup, "", 0, 0, id);
        byte_writer w{b};
        put(w, std::string{name});
        end_frame(b);
        ship(to, b);
    } catch (const rank_lost& e) {
        // The rank has ended: the lookup fails at once, through its future.
        if (auto f = take_back()) {
            lookup_answer a;
            a.lost = e.what();
            f(a);
        }
    } catch (...) {
        (void)take_back();
        throw;
    }
}

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

void engine::send_raw(int to, const void* bytes, std::size_t n) {
    std::lock_guard g{raw_lock_};
    batches_sent.fetch_add(1, std::memory_order_seq_cst);
    MPI_Send(bytes, static_cast<int>(n), MPI_BYTE, to, data_tag, comm);
}

bool engine::busy_sending() noexcept {
    for (int r = 0; r < size; ++r) {
        const outbox& o = out_[static_cast<std::size_t>(r)];
        if (ended(r)) continue;  // nobody receives there any more
        if (o.bytes.load(std::memory_order_seq_cst) != 0 ||
            o.direct_busy.load(std::memory_order_seq_cst))
            return true;
    }
    return flying_count_.load(std::memory_order_seq_cst) != 0 ||
           held_count_.load(std::memory_order_seq_cst) != 0;
}

void engine::drain_sends() {
    auto poll = cfg::collective_first_poll;
    while (busy_sending()) {
        troupe::this_thread::sleep_for(poll);
        poll = std::min(poll * 2, cfg::collective_max_poll);
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

// ---------------------------------------------------------------- the thread

void engine::run() noexcept {
    std::chrono::nanoseconds poll = cfg::first_poll;    // cold back-off
    std::chrono::nanoseconds watch = cfg::first_watch;  // delegated watchdog
    std::uint64_t seen_polls = external_polls_.load(std::memory_order_relaxed);
    std::int64_t seen_at = std::numeric_limits<std::int64_t>::min() / 2;  // polls last moved
    for (;;) {
        // Before the heartbeat: a poller that stops after this is caught by
        // delegated_sleep's recheck.
        const std::uint64_t sleeps = poller_sleeps_.load(std::memory_order_seq_cst);
        if (try_progress()) {
            poll = cfg::first_poll;
            // Without a spare core the pass may have woken the thread its
            // delivery is for, on our CPU: let it run.
            if (!spin_freely_.load(std::memory_order_relaxed)) std::this_thread::yield();
            continue;
        }
        // A direct send went out without us: what it asked for may come
        // back soon (a tell that starts a ping-pong): count it as activity.
        if (kicked_.load(std::memory_order_relaxed) &&
            kicked_.exchange(false, std::memory_order_acq_rel))
            last_activity_.store(clock_ns(), std::memory_order_relaxed);
        if (quit_.load(std::memory_order_acquire) && !busy_sending()) return;
        const std::int64_t now = clock_ns();
        if (const std::uint64_t n = external_polls_.load(std::memory_order_relaxed);
            n != seen_polls) {
            seen_polls = n;
            seen_at = now;
        }
        if (hot(now)) {
            poll = cfg::first_poll;
            if (now - seen_at < cfg::poller_fresh.count()) {
                // Idle threads are polling: keep out of their way (on a
                // machine with few cores a spinning engine takes the core
                // that would run the reply's receiver). Woken when one of
                // them stops; the watchdog only checks they are still there
                // (a poller that went off to run a long behaviour).
                if (delegated_sleep(watch, sleeps)) watch = cfg::first_watch;
                else watch = std::min(watch * 2, cfg::max_watch);
                continue;
            }
            // Nobody else polls: we do, without sleeping (the latency path).
            watch = cfg::first_watch;
            troupe::detail::cpu_relax();
            continue;
        }
        // Cold: nothing awaited, the spin-down window has passed. Sleep
        // with exponential back-off (an idle rank costs one look per
        // max_poll); senders, replies to ship and quit wake us at once.
        if (idle_sleep(poll)) poll = cfg::first_poll;
        else poll = std::min(poll * 2, cfg::max_poll);
    }
}

bool engine::hot(std::int64_t now) const noexcept {
    return awaiting_.load(std::memory_order_seq_cst) > 0 ||
           direct_pending_.load(std::memory_order_relaxed) != 0 ||
           flying_count_.load(std::memory_order_relaxed) != 0 ||
           held_count_.load(std::memory_order_relaxed) != 0 ||
           now - last_activity_.load(std::memory_order_relaxed) < cfg::idle_spin.count();
}

bool engine::try_progress() noexcept {
    // Test first: idle threads poll all the time; only one at a time
    // takes the line for writing.
    if (token_.load(std::memory_order_relaxed) || token_.exchange(true, std::memory_order_acquire))
        return false;
    pass_buffer = &pbuf_;
    const bool did = progress();
    pass_buffer = nullptr;
    if (did) last_activity_.store(clock_ns(), std::memory_order_relaxed);
    token_.store(false, std::memory_order_release);
    return did;
}

bool engine::poll_hook(void* self) noexcept {
    auto* e = static_cast<engine*>(self);
    if (engine_thread == e) return false;  // the engine's own park() spin
    const std::uint64_t before = e->batches_received.load(std::memory_order_relaxed);
    const bool did = e->try_progress();
    if (!did) {
        // The heartbeat: an idle thread polls (or found the token held, its
        // holder polls anyway). While it moves the engine thread keeps out
        // of the way.
        e->external_polls_.fetch_add(1, std::memory_order_relaxed);
    } else if (e->batches_received.load(std::memory_order_relaxed) - before >= 2) {
        // A stream, not a ping-pong: we are about to be busy with what we
        // received, so let the engine thread receive the next batches
        // beside us (no heartbeat now, and wake it if it stepped aside).
        e->wake_delegated();
    }
    return did;
}

bool engine::awaited_hook(void* self) noexcept {
    // The calling thread's last ask still awaits its reply: it is parking
    // for it (most likely, in get()), so it keeps polling (core's park
    // spin). Other threads parking meanwhile (an idle worker of this rank)
    // do not: one spinning thread per rank.
    auto* e = static_cast<engine*>(self);
    if (engine_thread == e || asked_engine != e) return false;
    return e->ask_pending(asked_id);
}

bool engine::ask_pending(std::uint64_t id) noexcept {
    if (!asks_lock_.try_lock()) return true;  // busy: ask again on the next check
    const std::uint32_t idx = static_cast<std::uint32_t>(id & 0xffffffffu) - 1;
    const bool pending =
        idx < asks_.size() && asks_[idx].generation == (id >> 32) && asks_[idx].q != nullptr;
    asks_lock_.unlock();
    return pending;
}

void engine::sleeping_hook(void* self) noexcept {
    auto* e = static_cast<engine*>(self);
    if (engine_thread == e) return;
    // Dekker with delegated_sleep: we bump the count, then read the word;
    // the engine sets the word, then rereads the count. Either it sees our
    // bump and does not sleep, or we see it asleep and wake it.
    e->poller_sleeps_.fetch_add(1, std::memory_order_seq_cst);
    e->wake_delegated();
}

void engine::wake_delegated() noexcept {
    if (handover_.load(std::memory_order_seq_cst) == 1 &&
        handover_.exchange(0, std::memory_order_seq_cst) == 1)
        troupe::detail::futex_wake(handover_);
}

bool engine::delegated_sleep(std::chrono::nanoseconds watch, std::uint64_t sleeps_seen) noexcept {
    handover_.store(1, std::memory_order_seq_cst);
    // The other half of sleeping_hook's pair (and of quit: the destructor
    // sets quit_, then wakes us).
    if (poller_sleeps_.load(std::memory_order_seq_cst) != sleeps_seen ||
        quit_.load(std::memory_order_seq_cst)) {
        handover_.store(0, std::memory_order_seq_cst);
        return true;
    }
    const auto deadline = std::chrono::steady_clock::now() + watch;
    while (handover_.load(std::memory_order_seq_cst) == 1 &&
           std::chrono::steady_clock::now() < deadline)
        troupe::detail::futex_wait_until(handover_, 1, deadline);
    // 0: a waker cleared it (and wakes the futex: harmless now).
    return handover_.exchange(0, std::memory_order_seq_cst) == 0;
}

bool engine::progress() {
    bool did = receive();
    if (!held_replies_.empty()) did |= ship_held_replies();
    if (replies_) did |= scan_replies();
    did |= flush_outboxes();
    if (!flying_.empty()) did |= complete_sends();
    if (direct_pending_.load(std::memory_order_relaxed) != 0) did |= complete_direct();
    return did;
}

bool engine::work_queued() noexcept {
    if (quit_.load(std::memory_order_seq_cst) || kicked_.load(std::memory_order_seq_cst))
        return true;
    for (int r = 0; r < size; ++r) {
        outbox& o = out_[static_cast<std::size_t>(r)];
        o.lock.lock();
        const bool some = !o.buf.empty();
        o.lock.unlock();
        if (some) return true;
    }
    return false;
}

bool engine::idle_sleep(std::chrono::nanoseconds d) {
    // Banked wakes (a positive count) only say "look again"; we are awake
    // and look again below, so dropping them loses nothing.
    int c = counter_.load(std::memory_order_relaxed);
    while (c > 0 && !counter_.compare_exchange_weak(c, 0, std::memory_order_acq_rel)) {}
    if (try_progress()) return true;
    troupe::detail::timer_node t;
    t.deadline = troupe::detail::timer_node::clock::now() + d;
    t.arg = this;
    t.fire = [](troupe::detail::timer_node& n) noexcept {
        auto* self = static_cast<engine*>(n.arg);
        if (self->counter_.fetch_add(1, std::memory_order_seq_cst) + 1 == 0) unpark(*self->ctx_);
    };
    troupe::detail::timer_arm(t);
    if (counter_.fetch_sub(1, std::memory_order_seq_cst) - 1 < 0) {
        // Announced: a waker that comes now unparks us. Recheck the outboxes
        // under their locks (the other half of wake()'s Dekker pair).
        if (work_queued()) {
            // Withdraw; if a waker brought the count to zero first, its
            // unpark is on the way: consume it.
            if (counter_.fetch_add(1, std::memory_order_seq_cst) + 1 != 0) park();
        } else {
            park();  // exactly one unpark: whoever brings the count to zero
        }
    }
    troupe::detail::timer_cancel(t);  // after this the callback cannot run
    return false;
}

byte_buffer engine::take_spare() {
    if (spares_.empty()) return byte_buffer{};
    byte_buffer b = std::move(spares_.back());
    spares_.pop_back();
    return b;
}

bool engine::receive() {
    for (int i = 0; i < cfg::receives_per_pass; ++i) {
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        MPI_Improbe(MPI_ANY_SOURCE, data_tag, comm, &flag, &msg, &st);
        if (!flag) return i > 0;
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        rbuf_.resize_uninitialised(static_cast<std::size_t>(n));
        MPI_Mrecv(rbuf_.data(), n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        parse(rbuf_.data(), static_cast<std::size_t>(n), st.MPI_SOURCE);
        // After the deliveries: until then the batch counts as in flight.
        batches_received.fetch_add(1, std::memory_order_seq_cst);
    }
    return true;
}

bool engine::flush_outboxes() {
    bool did = false;
    for (int r = 0; r < size; ++r) {
        outbox& o = out_[static_cast<std::size_t>(r)];
        if (o.bytes.load(std::memory_order_relaxed) == 0) continue;  // a hint; see outbox
        if (r != rank && ended(r)) {
            // Frames queued before its goodbye was seen: nobody receives
            // them (the asks among them failed with rank_lost).
            o.lock.lock();
            o.buf.clear();
            o.frames = 0;
            o.bytes.store(0, std::memory_order_seq_cst);
            o.lock.unlock();
            continue;
        }
        if (r != rank && flying_.size() >= cfg::max_in_flight) continue;
        byte_buffer b = take_spare();
        // Room for the batch before the lock (no throw under it).
        if (r != rank && flying_.size() == flying_.capacity())
            flying_.reserve(2 * flying_.size() + 4);
        std::uint64_t frames;
        o.lock.lock();
        o.buf.swap(b);
        frames = o.frames;
        o.frames = 0;
        // Counted as sent before the outbox reads empty: a termination
        // round that sees the empty outbox also sees the count.
        batches_sent.fetch_add(1, std::memory_order_seq_cst);
        if (r != rank) {
            // Posted under the lock: a direct send shipped after these
            // frames is posted after them (per-pair FIFO, see ship()).
            flying_.push_back(in_flight{MPI_REQUEST_NULL, std::move(b), r});
            flying_count_.fetch_add(1, std::memory_order_seq_cst);  // to a live rank (above)
            in_flight& f = flying_.back();
            MPI_Isend(f.buf.data(), static_cast<int>(f.buf.size()), MPI_BYTE, r, data_tag, comm,
                      &f.req);
        }
        o.bytes.store(0, std::memory_order_seq_cst);
        o.lock.unlock();
        frames_sent.fetch_add(frames, std::memory_order_relaxed);
        did = true;
        if (r == rank) {  // loop back without MPI
            parse(b.data(), b.size(), rank);
            batches_received.fetch_add(1, std::memory_order_seq_cst);
            b.clear();
            spares_.push_back(std::move(b));
        }
    }
    return did;
}

bool engine::complete_sends() {
    bool did = false;
    std::size_t keep = 0, live = 0;
    for (std::size_t i = 0; i < flying_.size(); ++i) {
        int done = 0;
        MPI_Test(&flying_[i].req, &done, MPI_STATUS_IGNORE);
        if (done) {
            flying_[i].buf.clear();
            spares_.push_back(std::move(flying_[i].buf));
            did = true;
        } else {
            if (!ended(flying_[i].to)) ++live;
            if (keep != i) flying_[keep] = std::move(flying_[i]);
            ++keep;
        }
    }
    flying_.resize(keep);
    // Sends to ended ranks may never complete (nobody receives them): they
    // keep neither the engine hot nor the world's drain waiting.
    flying_count_.store(live, std::memory_order_seq_cst);
    return did;
}

bool engine::scan_replies() {
    bool did = false;
    pending_reply** pp = &replies_;
    while (pending_reply* p = *pp) {
        // `sat`: the future's fulfil claimed our node (try_claim), so the
        // value or exception is stored.
        if (p->status.load(std::memory_order_acquire) != std::uintptr_t(select_status::sat)) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        // Takes the future's lock: the fulfiller's commit (its last touch of
        // the node while we are awake) is over when this returns.
        p->reply_future().unregister_select(p->node);
        byte_buffer& b = scratch();
        try {
            begin_frame(b, frame_kind::reply_value, p->message_name(), name_key(p->message_name()),
                        p->token, 0);
            byte_writer w{b};
            p->encode_value(w);
            end_frame(b);
        } catch (...) {
            auto [type, what] = describe_current();
            begin_frame(b, frame_kind::reply_error, p->message_name(), name_key(p->message_name()),
                        p->token, 0);
            byte_writer w{b};
            put(w, type);
            put(w, what);
            end_frame(b);
        }
        // Shipped now, or (the batch for that rank is full, or replies wait
        // before it) kept whole until a later pass has room: never dropped.
        // Counted in pending_replies until it is in the outbox.
        ship_reply(p->from, b);
        p->recycle();
        did = true;
    }
    return did;
}

// ---------------------------------------------------------------- parsing

void engine::parse(const char* p, std::size_t n, int from) {
    while (n > 0) {
        frame_header h;
        if (n < sizeof h) {
            report(from, "",
                   "troupe::remote: rank " + std::to_string(rank) +
                       " received a truncated frame header (" + std::to_string(n) +
                       " bytes) from rank " + std::to_string(from));
            return;
        }
        std::memcpy(&h, p, sizeof h);
        if (h.magic != frame_magic || h.size < sizeof h || h.size > n || h.size % 8 != 0 ||
            std::size_t{sizeof h} + h.name_len + h.payload_len > h.size) {
            std::string name;
            if (h.magic == frame_magic && sizeof h + h.name_len <= n)
                name.assign(p + sizeof h, h.name_len);
            report(from, name,
                   "troupe::remote: rank " + std::to_string(rank) +
                       " received a malformed frame from rank " + std::to_string(from) +
                       (name.empty() ? std::string{} : " (message " + quoted(name) + ")") + ": " +
                       (h.magic != frame_magic
                            ? std::string{"bad magic number"}
                            : "its sizes (frame " + std::to_string(h.size) + ", payload " +
                                  std::to_string(h.payload_len) + ") exceed the " +
                                  std::to_string(n) + " bytes received") +
                       "; the rest of the batch is dropped");
            return;
        }
        std::string_view name{p + sizeof h, h.name_len};
        byte_reader payload{p + sizeof h + h.name_len, h.payload_len};
        frames_received.fetch_add(1, std::memory_order_relaxed);
        handle(h, name, payload, from);
        p += h.size;
        n -= h.size;
    }
}

void engine::handle(const frame_header& h, std::string_view name, byte_reader& payload, int from) {
    switch (static_cast<frame_kind>(h.kind)) {
    case frame_kind::tell:
    case frame_kind::ask: handle_message(h, name, payload, from); return;
    case frame_kind::reply_value:
    case frame_kind::reply_error: handle_reply(h, name, payload, from); return;
    case frame_kind::lookup: handle_lookup(h, payload, from); return;
    case frame_kind::lookup_reply: handle_lookup_reply(h, payload, from); return;
    case frame_kind::goodbye: handle_goodbye(h, payload, from); return;
    }
    report(from, std::string{name},
           "troupe::remote: rank " + std::to_string(rank) + " received a frame of unknown kind " +
               std::to_string(h.kind) + " from rank " + std::to_string(from));
}

const engine::published* engine::find_published(std::uint64_t id) {
    // Under names_mutex_ (held by the caller).
    return id != 0 && id <= by_id_.size() ? &by_id_[id - 1] : nullptr;
}

void engine::handle_message(const frame_header& h, std::string_view name, byte_reader& payload,
                            int from) {
    const bool is_ask = static_cast<frame_kind>(h.kind) == frame_kind::ask;
    // Fails the asker's request with an error of type `type` (the asker's
    // future throws it instead of waiting forever); `extra` follows the
    // error's what() in the payload.
    auto fail_ask = [&](const char* type, const std::string& what,
                        const std::vector<std::string>& extra) {
        try {
            byte_buffer& b = scratch();
            begin_frame(b, frame_kind::reply_error, name, h.type_key, h.token, 0);
            byte_writer w{b};
            put(w, std::string{type});
            put(w, what);
            for (const std::string& x : extra) put(w, x);
            end_frame(b);
            ship(from, b);
        } catch (...) {}
    };
    const std::string here = "troupe::remote: rank " + std::to_string(rank);
    // What went wrong, if anything, decided under names_mutex_ and reported
    // after it (a report runs the user's handler, which may publish).
    std::string bad;
    std::optional<published> gone;
    {
        // Held from finding the actor to handing it the message, so that
        // ~actor (unpublish) waits for the delivery and no pass delivers to
        // the actor after it.
        std::lock_guard g{names_mutex_};
        const published* p = find_published(h.target);
        const pair_info* pi = p ? find_pair(p->type_key, h.type_key) : nullptr;
        if (!p) {
            bad = here + " received message " + quoted(name) + " from rank " +
                  std::to_string(from) + " for actor id " + std::to_string(h.target) +
                  ", which it never published";
        } else if (!pi || pi->msg_name != name || pi->actor_type != p->type) {
            if (!registered_type(name))
                bad = here + " received a message of unknown name " + quoted(name) + " from rank " +
                      std::to_string(from) + " for actor " + quoted(p->name) + " (type " + p->type +
                      "); no message type is registered under that name in this program";
            else
                bad = here + " cannot deliver message " + quoted(name) + " (type " +
                      *registered_type(name) + ") from rank " + std::to_string(from) +
                      " to actor " + quoted(p->name) + " of type " + p->type +
                      ": this program never sends that message to that actor type (call "
                      "troupe::remote::accept<" +
                      p->type + ", " + *registered_type(name) + ">())";
        } else if (!p->a || p->a->finished()) {
            // Destroyed (unpublished by ~actor) or finished: not bad input.
            ++by_id_[h.target - 1].dropped;
            gone = *p;
        } else {
            try {
                pi->fn(delivery{this, from, h.token}, *p->a, payload);
            } catch (const truncated_payload& e) {
                bad = here + " received a malformed message " + quoted(name) + " from rank " +
                      std::to_string(from) + " for actor " + quoted(p->name) + ": " + e.what();
            } catch (const std::exception& e) {
                bad = here + " could not deliver message " + quoted(name) + " from rank " +
                      std::to_string(from) + " to actor " + quoted(p->name) + ": " + e.what();
            }
        }
    }
    if (gone) {
        if (!is_ask) {
            report_gone(*gone, from, name);
            return;
        }
        fail_ask("troupe::remote::actor_gone",
                 here + ": the ask " + quoted(name) + " from rank " + std::to_string(from) +
                     " went to actor " + quoted(gone->name) + " (type " + gone->type + "), which " +
                     (gone->a ? "has finished" : "was destroyed") +
                     " (published there, and gone); the ask is dropped",
                 {gone->name, gone->type});
        return;
    }
    if (bad.empty()) return;
    report(from, std::string{name}, bad);
    if (is_ask) fail_ask("troupe::remote::network_error", bad, {});
}

void engine::handle_reply(const frame_header& h, std::string_view name, byte_reader& payload,
                          int from) {
    const std::uint32_t idx = static_cast<std::uint32_t>(h.target & 0xffffffffu) - 1;
    troupe::detail::request_tag* q = nullptr;
    ask_complete_fn fn = nullptr;
    bool abandoned = false;
    asks_lock_.lock();
    if (idx < asks_.size() && asks_[idx].generation == (h.target >> 32) &&
        (asks_[idx].q || asks_[idx].abandoned)) {
        q = asks_[idx].q;
        fn = asks_[idx].fn;
        abandoned = asks_[idx].abandoned;
        asks_[idx].q = nullptr;
        asks_[idx].abandoned = false;
        asks_[idx].next_free = free_ask_;
        free_ask_ = idx + 1;
        // Under the lock: a destructor that misses the slot sees this.
        // Release: a destructor reading this (or anything stored later)
        // is ordered after the previous reply's write (abandon_ask).
        if (q) completing_.store(q, std::memory_order_release);
    }
    asks_lock_.unlock();
    // An abandoned ask was uncounted when it was given up (abandon_ask).
    if (q) awaiting_.fetch_sub(1, std::memory_order_seq_cst);
    // The asker destroyed its request before the reply came (an ask given
    // up in a waituntil with a timeout): nothing waits for it.
    if (abandoned) return;
    // From a rank that has ended: its goodbye failed every ask awaiting it
    // (and freed their slots), and replies it shipped after its goodbye
    // find nothing. Not bad input.
    if (!q && ended(from)) return;
    if (!q) {
        report(from, std::string{name},
               "troupe::remote: rank " + std::to_string(rank) + " received a reply (" +
                   quoted(name) + ") from rank " + std::to_string(from) +
                   " to an ask it is not waiting for (id " + std::to_string(h.target) + ")");
        return;
    }
    try {
        fn(*q, static_cast<frame_kind>(h.kind), payload, from);
    } catch (const already_answered&) {
        completing_.store(nullptr, std::memory_order_release);
        // Not the other rank's fault: this rank answered the request itself
        // (a reply, or a second send of it) while the ask was out. Loud, but
        // not bad input: the job goes on and the first answer stands.
        std::fprintf(stderr,
                     "troupe::remote: rank %d: the reply to \"%.*s\" from rank %d came for a "
                     "request already answered on this rank (replied to while it was asked on "
                     "another rank?); the reply is dropped, the first answer stands\n",
                     rank, static_cast<int>(name.size()), name.data(), from);
        std::fflush(stderr);
        return;
    } catch (const std::exception& e) {
        completing_.store(nullptr, std::memory_order_release);
        report(from, std::string{name},
               "troupe::remote: rank " + std::to_string(rank) + " received a malformed reply to " +
                   quoted(name) + " from rank " + std::to_string(from) + ": " + e.what());
        return;
    }
    completing_.store(nullptr, std::memory_order_release);  // q may go now
}

void engine::handle_lookup(const frame_header& h, byte_reader& payload, int from) {
    // This rank said goodbye (its actors are gone or going): the asker
    // fails the lookup with rank_lost when the goodbye, shipped before any
    // answer, reaches it; an answer would say less ("publishes none").
    if (ending_.load(std::memory_order_seq_cst)) return;
    std::string name;
    try {
        get(payload, name);
    } catch (const std::exception& e) {
        report(from, "",
               "troupe::remote: rank " + std::to_string(rank) +
                   " received a malformed lookup from rank " + std::to_string(from) + ": " +
                   e.what());
        return;
    }
    std::uint8_t found = 0;
    std::uint64_t id = 0;
    std::string type;
    std::vector<std::string> names;
    {
        std::lock_guard g{names_mutex_};
        if (auto it = by_name_.find(name); it != by_name_.end()) {
            found = 1;
            id = it->second;
            type = by_id_[id - 1].type;
        } else if (auto g = std::find_if(
                       by_id_.rbegin(), by_id_.rend(),
                       [&](const published& p) { return p.a == nullptr && p.name == name; });
                   g != by_id_.rend()) {
            found = 2;  // published under that name, and destroyed since
            type = g->type;
        } else {
            for (auto& [n, i] : by_name_) names.push_back(n);
            std::sort(names.begin(), names.end());
        }
    }
    byte_buffer& b = scratch();
    begin_frame(b, frame_kind::lookup_reply, "", 0, h.token, 0);
    byte_writer w{b};
    put(w, found);
    put(w, id);
    put(w, type);
    put(w, names);
    end_frame(b);
    try {
        ship(from, b);
    } catch (const rank_lost&) {
        // The asker has ended: nobody waits for the answer.
    }
}

void engine::handle_lookup_reply(const frame_header& h, byte_reader& payload, int from) {
    lookup_answer a;
    std::uint8_t found = 0;
    try {
        get(payload, found);
        get(payload, a.id);
        get(payload, a.type);
        get(payload, a.published);
    } catch (const std::exception& e) {
        report(from, "",
               "troupe::remote: rank " + std::to_string(rank) +
                   " received a malformed lookup answer from rank " + std::to_string(from) + ": " +
                   e.what());
        return;
    }
    a.found = found == 1;
    a.gone = found == 2;
    std::function<void(const lookup_answer&)> done;
    {
        std::lock_guard g{lookups_mutex_};
        auto it = lookups_.find(h.target);
        if (it == lookups_.end()) return;  // failed already: `from` has ended
        done = std::move(it->second.done);
        lookups_.erase(it);
    }
    awaiting_.fetch_sub(1, std::memory_order_seq_cst);
    done(a);
}

}  // namespace troupe::remote::detail
