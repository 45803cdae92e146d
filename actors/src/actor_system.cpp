// actor_system, the default system and the thesis-style start/stop
// functions; the reports of a stop that keeps waiting.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <typeinfo>
#include <unordered_set>
#include <vector>

#include "executor.hpp"
#include "troupe/actor_timer.hpp"
#include "troupe/error.hpp"

namespace troupe {

namespace {

// The one default runtime: the system new actors join when nothing more
// specific applies (see default_actor_system()).
std::atomic<actor_system*> g_default{nullptr};

std::mutex g_started_mutex;
actor_system* g_started = nullptr;  // from start_actor_system, guarded by g_started_mutex

// Executors a timed stop abandoned: survivors still point into them.
std::mutex g_abandoned_mutex;
std::vector<std::unique_ptr<detail::executor>>& abandoned() {
    static auto* v = new std::vector<std::unique_ptr<detail::executor>>;  // reachable, never freed
    return *v;
}

void release_default(actor_system* s) noexcept {
    actor_system* expected = s;
    g_default.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
}

actor_system_config with_workers(std::size_t n) {
    actor_system_config c;
    c.workers = n;
    return c;
}

}  // namespace

namespace detail {
executor* default_executor() noexcept {
    actor_system* s = g_default.load(std::memory_order_acquire);
    return s ? &s->impl() : nullptr;
}

namespace {

// Survivors of a running system, by type, with what its workers do. A
// mailbox's registry is touched only by the worker holding its batch
// (being_processed) or under its lock (detach): we read it under the lock
// while no batch holds it (acquire: pairs with the release that ended the
// last batch, so we see its links); holding the lock keeps a new gulp out
// while we read. A mailbox whose batch a blocked worker holds was read while
// that worker's wait was pinned (look_at_workers); it counts if the worker
// is still in that wait (then its batch has not moved). Any other mailbox in
// a batch is counted as busy and its actors are not named. Actors with
// messages queued that have not received one yet are named too: they were
// messaged.
stop_report survivors_now(executor& ex, const workers_view& v) {
    stop_report r;
    r.finished = false;
    r.live_actors = static_cast<std::size_t>(ex.live());
    r.workers = v.lines;
    r.cycles = v.cycles;
    r.worker_count = ex.workers.size();
    r.blocked_workers = v.blocked;
    r.all_workers_blocked = v.all_blocked;
    std::map<std::string, std::size_t> by_name;
    std::unordered_set<const actor*> seen;
    std::size_t named = 0;
    bool all_seen = true;
    auto note = [&](const actor* a, const std::string& type) {
        if (!seen.insert(a).second) return;
        ++by_name[type];
        ++named;
    };
    // The receivers of queued envelopes not registered yet (sent a message,
    // not delivered yet). A queued receiver's storage must be alive for its
    // delivery anyway (docs/actors.md, "Messages to finished actors").
    auto queued = [&](const copy_queue& q) {
        for (std::uint32_t k = 0; k < q.size() && k < max_scanned_envelopes; ++k) {
            const actor* a = q.front()[k].receiver;
            if (seen.count(a) || !worker_access::alive(*a) || worker_access::registered(*a))
                continue;
            note(a, user_type_name(demangle(typeid(*a).name())));  // RTTI only here, in a report
        }
        if (q.size() > max_scanned_envelopes) all_seen = false;
    };
    for (std::size_t i = 0; i < ex.mailbox_count; ++i) {
        mailbox& mb = ex.mailboxes[i];
        mb.lock.lock();
        if (mb.being_processed.load(std::memory_order_acquire)) {
            const held_batch* h = nullptr;
            for (const held_batch& x : v.held)
                if (x.box == &mb && x.rec->seq.load(std::memory_order_acquire) == x.seq) h = &x;
            if (!h) {
                ++r.busy_mailboxes;
                mb.lock.unlock();
                continue;
            }
            for (std::size_t k = 0; k < h->actors.size(); ++k) note(h->actors[k], h->types[k]);
            if (!h->complete) all_seen = false;
        } else {
            for (actor* a = mb.settled; a; a = worker_access::next(a))
                note(a, user_type_name(demangle(typeid(*a).name())));
        }
        r.queued_messages += mb.pending.load(std::memory_order_relaxed);
        queued(*mb.queue);
        mb.lock.unlock();
    }
    for (auto& [t, n] : by_name) r.survivors.push_back({t, n});
    std::stable_sort(r.survivors.begin(), r.survivors.end(),
                     [](const survivor& a, const survivor& b) { return a.count > b.count; });
    const std::size_t unnamed = r.live_actors > named ? r.live_actors - named : 0;
    // "Never messaged" only when every mailbox and queue was looked at.
    if (r.busy_mailboxes == 0 && all_seen) r.never_messaged = unnamed;
    else r.not_inspected = unnamed;
    return r;
}

stop_report survivors_now(executor& ex) { return survivors_now(ex, look_at_workers(ex)); }

}  // namespace

stop_report survivors_running(executor& ex, const workers_view& v) { return survivors_now(ex, v); }

void write_actor_dump(void* arg, std::ostream& os) {
    executor& ex = *static_cast<executor*>(arg);
    os << describe("actor system", ex.cfg.name.empty() ? nullptr : ex.cfg.name.c_str(), ex.owner)
       << ": " << ex.workers.size() << " worker(s) (" << ex.parked_workers() << " asleep), "
       << ex.live() << " live actor(s)\n";
    const workers_view v = look_at_workers(ex);
    for (const std::string& l : v.lines) os << "  " << l << "\n";
    std::size_t shown = 0, queued = 0;
    for (std::size_t i = 0; i < ex.mailbox_count; ++i) {
        const std::uint32_t n = ex.mailboxes[i].pending.load(std::memory_order_relaxed);
        if (n == 0) continue;
        queued += n;
        if (++shown <= 16)
            os << "  mailbox " << i << ": " << n << " message(s) queued"
               << (ex.mailboxes[i].being_processed.load(std::memory_order_relaxed)
                       ? ", being processed"
                       : "")
               << "\n";
    }
    os << "  messages queued: " << queued << " in " << shown << " mailbox(es)\n";
    // Sent with troupe::ask and not answered yet (requests sent with `|`
    // are not counted; remote asks are not either).
    // Expired asks whose receiver has not answered yet are shown apart.
    const ask_counter& asks = *ex.asks.p;
    const std::uint64_t all = asks.outstanding(),
                        late = asks.awaiting_late.load(std::memory_order_relaxed);
    os << "  asks outstanding: " << (all > late ? all - late : 0) << "\n";
    if (const std::uint64_t t = asks.timed_out.load(std::memory_order_relaxed); t != 0 || late != 0)
        os << "  asks timed out: " << t << " (" << late << " still held by their receiver)\n";
    if (const std::uint64_t d = asks.late_replies.load(std::memory_order_relaxed); d != 0)
        os << "  late replies dropped: " << d << "\n";
    {
        // Cancelled timers whose heap entry is not dropped yet still hold
        // their block: shown apart, not as pending.
        const std::size_t held = actor_timers_pending();
        const std::size_t dead = std::min(actor_timers_cancelled(), held);
        os << "  actor timers pending (all systems): " << held - dead;
        if (dead != 0) os << " (and " << dead << " cancelled, not yet dropped from the heap)";
        os << "\n";
    }
    if (const std::uint64_t d = ex.timers_dropped.load(std::memory_order_relaxed); d != 0)
        os << "  timer messages dropped (their actor had finished): " << d << "\n";
    const stop_report r = survivors_now(ex, v);
    for (const survivor& s : r.survivors)
        os << "  live actors of type " << s.type << ": " << s.count << "\n";
    if (r.never_messaged) os << "  live actors never messaged: " << r.never_messaged << "\n";
    if (r.not_inspected)
        os << "  live actors not named (in mailboxes being processed, or never messaged): "
           << r.not_inspected << "\n";
    if (r.busy_mailboxes)
        os << "  mailboxes in a batch now (their actors not named): " << r.busy_mailboxes << "\n";
    for (const std::string& c : v.cycles) os << "  " << c << "\n";
    if (!v.all_blocked.empty() && v.cycles.empty())
        os << "  every worker (" << ex.workers.size()
           << ") is blocked inside a behaviour (each one's wait is above)\n";
}

void report_stop_waiting(executor& ex, std::chrono::nanoseconds waited) noexcept {
    try {
        stop_report r = survivors_now(ex);
        r.waited = waited;
        if (ex.cfg.on_stop_report) {
            ex.cfg.on_stop_report(r);
            return;
        }
        const double secs = std::chrono::duration<double>(waited).count();
        std::fprintf(
            stderr, "troupe: %s: stop still waiting after %.1f s: %s\n",
            describe("actor system", ex.cfg.name.empty() ? nullptr : ex.cfg.name.c_str(), ex.owner)
                .c_str(),
            secs, r.to_string().c_str());
        std::fflush(stderr);
    } catch (const std::exception& x) {
        std::fprintf(stderr, "troupe: a stop report failed: %s\n", x.what());
    } catch (...) {
        std::fprintf(stderr, "troupe: a stop report failed\n");
    }
}

}  // namespace detail

actor_system::actor_system() : actor_system(actor_system_config{}) {}

actor_system::actor_system(std::size_t workers) : actor_system(with_workers(workers)) {}

actor_system::actor_system(const actor_system_config& config)
    : impl_(std::make_unique<detail::executor>(config, this)) {
    // The first running system becomes the default (unless one exists).
    actor_system* expected = nullptr;
    g_default.compare_exchange_strong(expected, this, std::memory_order_acq_rel);
}

actor_system::~actor_system() {
    if (!impl_->stopped.load(std::memory_order_relaxed)) impl_->stop(false, {});
    release_default(this);
    if (impl_->abandoned.load(std::memory_order_relaxed)) {
        std::lock_guard g{g_abandoned_mutex};
        abandoned().push_back(std::move(impl_));
    }
}

void actor_system::stop() {
    impl_->stop(false, {});
    if (impl_->stopped.load(std::memory_order_relaxed)) release_default(this);
}

stop_report actor_system::stop_for(std::chrono::nanoseconds limit) {
    stop_report r = impl_->stop(true, std::chrono::steady_clock::now() + limit);
    if (impl_->stopped.load(std::memory_order_relaxed)) release_default(this);
    return r;
}

bool actor_system::stopped() const noexcept {
    return impl_->stopped.load(std::memory_order_relaxed);
}
std::size_t actor_system::workers() const noexcept { return impl_->workers.size(); }
std::size_t actor_system::mailboxes() const noexcept { return impl_->mailbox_count; }
std::size_t actor_system::live_actors() const noexcept {
    return static_cast<std::size_t>(impl_->live());
}
void actor_system::report_waiting(std::chrono::nanoseconds waited) noexcept {
    detail::report_stop_waiting(*impl_, waited);
}
std::size_t actor_system::parked_workers() const noexcept { return impl_->parked_workers(); }
actor_statistics actor_system::statistics() const { return impl_->statistics(); }
const actor_system_config& actor_system::config() const noexcept { return impl_->cfg; }

actor_system* default_actor_system() noexcept { return g_default.load(std::memory_order_acquire); }

void start_actor_system(const actor_system_config& config) {
    std::lock_guard g{g_started_mutex};
    if (g_started) {
        detail::report_misuse(detail::describe("actor system", "default", g_started) +
                                  ": start_actor_system called while it is running (call "
                                  "stop_actor_system first); ignored",
                              misuse_kind::repaired);
        return;
    }
    g_started = new actor_system(config);
    // The started system is the default even if another one was.
    g_default.store(g_started, std::memory_order_release);
}

void start_actor_system() { start_actor_system(actor_system_config{}); }
void start_actor_system(std::size_t workers) { start_actor_system(with_workers(workers)); }

namespace {
actor_system* take_started() {
    std::lock_guard g{g_started_mutex};
    actor_system* s = g_started;
    g_started = nullptr;
    if (!s)
        detail::report_misuse(
            "actor system: stop_actor_system called with no system started by start_actor_system; "
            "ignored",
            misuse_kind::repaired);
    return s;
}
}  // namespace

void stop_actor_system() {
    if (actor_system* s = take_started()) {
        s->stop();
        delete s;
    }
}

stop_report stop_actor_system_for(std::chrono::nanoseconds limit) {
    stop_report r;
    if (actor_system* s = take_started()) {
        r = s->stop_for(limit);
        delete s;
    }
    return r;
}

std::string stop_report::to_string() const {
    if (finished) return "every actor finished";
    std::string s = std::to_string(live_actors) + " actor(s) still alive";
    const char* sep = ": ";
    for (const auto& v : survivors) {
        s += sep + std::to_string(v.count) + " x " + v.type;
        sep = ", ";
    }
    if (never_messaged) {
        s += sep + std::to_string(never_messaged) + " never sent a message";
        sep = ", ";
    }
    if (not_inspected)
        s += sep + std::to_string(not_inspected) +
             " not named (in the mailbox(es) being processed, " + "or never sent a message)";
    // What was seen, not a guess.
    for (const auto& c : cycles) s += "; " + c;
    if (!all_workers_blocked.empty()) s += "; " + all_workers_blocked;
    else if (busy_mailboxes)
        s += "; " + std::to_string(busy_mailboxes) +
             " mailbox(es) being processed now (a behaviour running or blocked: troupe::dump "
             "shows what each worker waits on)";
    if (queued_messages) s += "; " + std::to_string(queued_messages) + " message(s) queued";
    if (workers_left)
        s += "; " + std::to_string(workers_left) +
             " worker(s) left blocked inside a behaviour (not joined; the system's memory stays "
             "allocated)";
    if (!busy_mailboxes && !queued_messages && blocked_workers == 0 &&
        (!survivors.empty() || never_messaged))
        s += "; no behaviour was running or blocked and no message was queued: nothing in the "
             "system will end them, only a message from outside (a poison pill, e.g. "
             "`a | troupe::finished_msg`, or one that makes a behaviour end them) or an actor "
             "timer";
    return s;
}

}  // namespace troupe
