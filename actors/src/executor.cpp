// The executor: construction, termination detection, stop.
#include "executor.hpp"
#include "troupe/detail/trace.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <typeinfo>
#include <unordered_set>
#include <utility>

#include "troupe/config.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/error.hpp"
#include "troupe/knobs.hpp"
#include "troupe/topology.hpp"

namespace troupe::detail {

namespace {

const char* name_or(const actor_system_config& c, const char* fallback) {
    return c.name.empty() ? fallback : c.name.c_str();
}

// TROUPE_ACTOR_WORKERS, read once: "user_threads" or "user_threads:K"
// (K workers per processor by default) selects user-thread workers.
struct worker_environment {
    bool user = false;
    std::size_t per_processor = 1;
};

const worker_environment& environment() {
    static const worker_environment env = [] {
        worker_environment e;
        const char* v = knobs::value(knobs::actor_workers);
        if (!v) return e;
        const std::string s{v};
        const std::string prefix = "user_threads";
        if (s.compare(0, prefix.size(), prefix) != 0) return e;
        e.user = true;
        if (s.size() > prefix.size() + 1 && s[prefix.size()] == ':') {
            const long k = std::strtol(s.c_str() + prefix.size() + 1, nullptr, 10);
            if (k > 0 && k <= 64) e.per_processor = static_cast<std::size_t>(k);
        }
        return e;
    }();
    return env;
}

// Fills in defaults and repairs what checked builds report.
actor_system_config resolve(actor_system_config c, const void* who) {
    if (c.threads == worker_threads::from_environment)
        c.threads = environment().user ? worker_threads::user : worker_threads::kernel;
    if (c.threads == worker_threads::user) {
        const std::size_t k = environment().per_processor;
        if (c.workers == 0) {
            if (c.processors == 0) c.processors = available_concurrency();
            c.workers = c.processors * k;
        }
        if (c.processors == 0) c.processors = (c.workers + k - 1) / k;
    } else {
        c.processors = 0;  // no cluster of its own
    }
    if (c.workers == 0) c.workers = available_concurrency();  // the one CPU count (topology.hpp)
    if (c.queues_per_worker == 0) c.queues_per_worker = 1;
    if (c.mailboxes == 0) c.mailboxes = c.workers * c.queues_per_worker;
    if (c.mailboxes < c.workers) {
        if constexpr (checked_build)
            report_misuse(describe("actor system", name_or(c, nullptr), who) +
                              ": executor configured with " + std::to_string(c.mailboxes) +
                              " mailbox(es) for " + std::to_string(c.workers) +
                              " workers; every worker needs at least one (using " +
                              std::to_string(c.workers) + ")",
                          misuse_kind::repaired);
        c.mailboxes = c.workers;
    }
    if (!c.worker_pu.empty() && c.worker_pu.size() != c.workers) c.worker_pu.clear();
    if (c.placement_run == 0) c.placement_run = 1;
    return c;
}

}  // namespace

executor::executor(const actor_system_config& c, actor_system* o)
    : cfg(resolve(c, o)),
      owner(o),
      mailbox_count(cfg.mailboxes),
      user_threads(cfg.threads == worker_threads::user),
      idle_(cfg.workers, idle_group::spinner_duty::hint) {
    trace::start_if_requested();  // before any worker runs (docs/trace.md)
    born_ticks = timestamp();
    born_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now().time_since_epoch())
                  .count();
    const std::size_t n = cfg.workers;
    stealing = cfg.stealing && n > 1;
    if (user_threads) {
        // The workers' own processors (pinned if asked; cfg outlives pool,
        // so the name stays valid).
        cluster_options po;
        po.processors = cfg.processors;
        po.pin = cfg.pin;
        po.name = cfg.name.empty() ? "actor workers" : cfg.name.c_str();
        pool = std::make_unique<troupe::cluster>(po);
    }
    if (!cfg.synthetic_topology.empty()) {
        machine = std::make_unique<topology>(cfg.synthetic_topology);  // throws if hwloc rejects it
    } else if (cfg.pin ||
               (stealing && cfg.victims == victim_policy::locality && !cfg.custom_victims)) {
        try {
            machine = std::make_unique<topology>();
        } catch (const std::exception&) {
            machine.reset();  // locality degrades to one group (random), no pinning
        }
    }
    const std::size_t pus = machine ? std::max<std::size_t>(machine->pu_count(), 1) : 1;
    worker_pu = cfg.worker_pu;
    if (worker_pu.empty())
        for (std::size_t i = 0; i < n; ++i) worker_pu.push_back(i % pus);
    for (auto& pu : worker_pu) pu %= pus;

    mailboxes.reset(new mailbox[mailbox_count]);
    slots.reset(new std::atomic<mailbox*>[mailbox_count]);
    stamps.reset(new std::atomic<std::uint64_t>[n]);
    for (std::size_t w = 0; w < n; ++w) stamps[w].store(0, std::memory_order_relaxed);

    // Contiguous ranges; the first mailbox_count % n workers get one extra.
    const std::size_t base = mailbox_count / n, extra = mailbox_count % n;
    std::size_t begin = 0;
    for (std::size_t w = 0; w < n; ++w) {
        const std::size_t end = begin + base + (w < extra ? 1 : 0);
        for (std::size_t i = begin; i < end; ++i) {
            mailbox& mb = mailboxes[i];
            mb.queue = new copy_queue;
            mb.idle = &idle_;
            mb.exec = this;
            mb.index = static_cast<std::uint32_t>(i);
            mb.owner.store(static_cast<std::uint32_t>(w), std::memory_order_relaxed);
            slots[i].store(&mb, std::memory_order_relaxed);
        }
        workers.push_back(std::make_unique<worker>(*this, w, begin, end));
        begin = end;
    }
    for (auto& w : workers) idle_.add_member(w->idle_member());  // member w is worker w
    // Starting a thread publishes everything above to it.
    for (auto& w : workers) w->start();
    dump_.write = &write_actor_dump;
    dump_.arg = this;
    add_dump_section(dump_);
    timers_add_system(*this);
}

executor::~executor() {
    timers_remove_system(*this);  // waits out a timer callback sending into us
    remove_dump_section(dump_);
    if (!stopped) shut_down_workers();  // only reachable if construction of the owner failed
    for (std::size_t i = 0; i < mailbox_count; ++i) delete mailboxes[i].queue;
}

// External creations (docs/actors.md, "Placement"). Tickets are counted in
// one sequence per system, so concurrent creators share runs: actors created
// at about the same time land together, whoever creates them.
std::size_t executor::ticket_external() noexcept {
    // relaxed: the counter only spreads creations; any mailbox is correct
    // (an actor keeps the one it gets for life, so FIFO holds wherever it is).
    const std::uint64_t t = ext_ticket.fetch_add(1, std::memory_order_relaxed);
    if (cfg.placement == external_placement::spread)
        return static_cast<std::size_t>(t % mailbox_count);
    const worker& w = *workers[static_cast<std::size_t>((t / cfg.placement_run) % workers.size())];
    const std::size_t s = w.slot_begin + static_cast<std::size_t>(t % (w.slot_end - w.slot_begin));
    // The mailbox the worker scans in that position now (stealing permutes
    // slots). acquire: pairs with the thief's seq_cst slot stores, though
    // only the mailbox's index is read, which never changes. Null while
    // the worker is mid-swap on that slot: then the mailbox that started
    // there, which is as good a guess.
    const mailbox* mb = slots[s].load(std::memory_order_acquire);
    return mb ? mb->index : s;
}

// Live actors = created - ended, summed over per-worker counters written
// without locked instructions. Sound as a zero test: we read every ended
// count (acquire) before any created count, and each ended actor's creation
// happens-before its end, so created >= ended for what we saw; a zero means
// every creation we saw had ended at the moment we read the ended counts.
// (Creations by threads racing with stop are a program error.)
std::uint64_t executor::live() const noexcept {
    full_fence();
    std::uint64_t ended = ext_terminated.load(std::memory_order_acquire);
    for (auto& w : workers) ended += w->terminated.load(std::memory_order_acquire);
    std::uint64_t made = ext_created.load(std::memory_order_acquire);
    for (auto& w : workers) made += w->created.load(std::memory_order_acquire);
    return made > ended ? made - ended : 0;
}

void executor::notify_if_done() noexcept {
    if (!stopping.load(std::memory_order_seq_cst)) return;
    if (live() != 0) return;
    // Whoever takes the waiter away owns its single unpark (a timer may
    // race us; the stopper itself may reclaim it).
    wake_stopper();
}

void executor::wake_stopper() noexcept {
    // Announced (wake_guard) before the CAS that takes it: a stopper that
    // finds the slot empty may return and its thread end before our unpark.
    // The slot only goes from a context to empty (and back to the same
    // stopper's context in its next round), so a failed CAS ends the loop
    // or re-reads that same context.
    context* w = waiter.load(std::memory_order_acquire);
    while (w) {
        troupe::detail::wake_guard g{*w};
        if (waiter.compare_exchange_weak(w, nullptr, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
            unpark(*w);
            return;
        }
    }
}

void executor::shut_down_workers(const std::vector<bool>* leave) {
    remove_dump_section(dump_);  // no dump reads a system that is going away
    // Dekker with park_idle: either the worker sees `shutdown` after its
    // announce, or we see it parked and wake it.
    shutdown.store(true, std::memory_order_seq_cst);
    for (std::size_t w = 0; w < workers.size(); ++w) wake(w);
    for (std::size_t w = 0; w < workers.size(); ++w)
        if (!leave || !(*leave)[w]) workers[w]->join();
}

stop_report executor::stop(bool timed, std::chrono::steady_clock::time_point deadline) {
    if (stopped) return {};
    if (tls_worker && &tls_worker->exec == this) {
        report_misuse(describe("actor system", name_or(cfg, nullptr), owner) +
                      ": stop called from one of its own behaviours (it would wait for itself)");
        stop_report r;
        r.finished = false;
        return r;
    }
    context& me = this_context();
    // For dumps: the stopper waits for the system's live actors.
    wait_scope rec("actor system stop", name_or(cfg, nullptr), owner);
    // Publish the waiter before `stopping`: a worker that sees `stopping`
    // (seq_cst) also sees us in `waiter`.
    waiter.store(&me, std::memory_order_seq_cst);
    stopping.store(true, std::memory_order_seq_cst);
    bool done;
    if (live() == 0) {  // live() starts with a seq_cst fence: Dekker with the workers'
        // Reclaim our own wake; if a worker claimed it first, take its unpark.
        if (waiter.exchange(nullptr, std::memory_order_acq_rel) != &me) park();
        done = true;
    } else {
        // Wait, waking at the deadline (timed) and every report period to
        // say who is still alive (stop never hangs silently).
        using clock = std::chrono::steady_clock;
        const auto began = clock::now();
        const auto period = cfg.stop_report_period;
        auto next_report = period.count() > 0 ? began + period : clock::time_point::max();
        for (;;) {
            timer_node t;
            t.deadline = timed ? std::min(deadline, next_report) : next_report;
            bool armed = t.deadline != clock::time_point::max();
            if (armed) {
                t.arg = this;
                t.fire = [](timer_node& n) noexcept {
                    static_cast<executor*>(n.arg)->wake_stopper();
                };
                try {
                    timer_arm(t);
                } catch (...) {
                    // No timer: a timed stop fails (after taking back its
                    // wake); an untimed one waits without reports.
                    if (timed) {
                        if (waiter.exchange(nullptr, std::memory_order_acq_rel) != &me) park();
                        throw;
                    }
                    armed = false;
                    next_report = clock::time_point::max();
                }
            }
            trace::note_park("actor system stop");
            park();  // exactly one unpark, from whoever exchanged `waiter` away
            if (armed) timer_cancel(t);
            if (live() == 0) {
                done = true;
                break;
            }
            const auto now = clock::now();
            if (now >= next_report) {
                report_stop_waiting(*this, now - began);
                next_report = now + period;
            }
            if (timed && now >= deadline) {
                done = false;
                break;
            }
            // Wait again: publish, then re-check (the same Dekker pair with
            // notify_if_done as above).
            waiter.store(&me, std::memory_order_seq_cst);
            if (live() == 0) {
                if (waiter.exchange(nullptr, std::memory_order_acq_rel) != &me) park();
                done = true;
                break;
            }
        }
    }
    // Giving up: workers blocked inside a behaviour are left there (their
    // behaviour may never return), the others are joined.
    workers_view left;
    if (!done) {
        try {
            left = look_at_workers(*this);
        } catch (...) {
            left = {};  // no memory for the look: join every worker, as before
        }
    }
    shut_down_workers(done || left.blocked == 0 ? nullptr : &left.is_blocked);
    stop_report rep;
    if (done) {
        if constexpr (checked_build) report_leftovers();
    } else {
        if (left.blocked == 0) {
            rep = survivors();
        } else {
            // Left workers may still run: read the mailboxes as for a
            // running system, under their locks.
            rep = survivors_running(*this, left);
            rep.workers_left = left.blocked;
        }
        abandoned = true;  // survivors (and left workers) keep pointers into us: never freed
        std::fprintf(stderr, "troupe: %s: stop gave up: %s\n",
                     describe("actor system", name_or(cfg, nullptr), owner).c_str(),
                     rep.to_string().c_str());
    }
    accepting.store(false, std::memory_order_release);
    final_stats_ = statistics();
#if defined(TROUPE_STATISTICS)
    std::cerr << "troupe actor system '" << name_or(cfg, "unnamed") << "' statistics ("
              << workers.size() << " workers, " << mailbox_count << " mailboxes):\n"
              << final_stats_;
#endif
    stopped = true;
    // The survivors' monitors and links hear of it (after `stopped`: a
    // down to a watcher of this system is then dropped, not queued).
    if (!done) life_system_stopped(*this);
    return rep;
}

void executor::report_leftovers() {
#if defined(TROUPE_CHECKED)
    std::map<std::string, std::size_t> by_pair;
    std::size_t total = 0;
    for (std::size_t i = 0; i < mailbox_count; ++i) {
        const copy_queue& q = *mailboxes[i].queue;
        for (std::uint32_t k = 0; k < q.size(); ++k) {
            const envelope& e = q.front()[k];
            by_pair["'" + user_type_name(e.names->message) + "' for '" +
                    user_type_name(e.names->actor) + "'"]++;
            ++total;
        }
    }
    if (!total) return;
    std::string what =
        describe("actor system", name_or(cfg, nullptr), owner) + ": " + std::to_string(total) +
        " message(s) sent but never received (still queued when it stopped, their actors had "
        "finished):";
    for (auto& [k, n] : by_pair) what += " " + std::to_string(n) + " x " + k + ";";
    what.pop_back();
    report_misuse(what, misuse_kind::lost_message);
#endif
}

stop_report executor::survivors() const {
    stop_report r;
    r.finished = false;
    r.live_actors = static_cast<std::size_t>(live());
    std::map<std::string, std::size_t> by_type;
    std::size_t registered = 0;
    std::unordered_set<const actor*> seen;
    auto note = [&](actor* a) {
        if (!seen.insert(a).second) return;
        // RTTI here only: a report after the workers stopped.
        ++by_type[user_type_name(demangle(typeid(*a).name()))];
        ++registered;
    };
    for (std::size_t i = 0; i < mailbox_count; ++i) {
        for (actor* a = mailboxes[i].settled; a; a = worker_access::next(a)) note(a);
    }
    // Actors sent a message that none received yet: messaged, not "never
    // messaged" (their storage must be alive for the delivery anyway).
    bool all_seen = true;
    for (std::size_t i = 0; i < mailbox_count; ++i) {
        const copy_queue& q = *mailboxes[i].queue;
        for (std::uint32_t k = 0; k < q.size() && k < max_scanned_envelopes; ++k) {
            actor* a = q.front()[k].receiver;
            if (worker_access::alive(*a) && !worker_access::registered(*a)) note(a);
        }
        if (q.size() > max_scanned_envelopes) all_seen = false;
    }
    for (auto& [t, n] : by_type) r.survivors.push_back({t, n});
    std::sort(r.survivors.begin(), r.survivors.end(),
              [](const survivor& a, const survivor& b) { return a.count > b.count; });
    const std::size_t unnamed = r.live_actors > registered ? r.live_actors - registered : 0;
    if (all_seen) r.never_messaged = unnamed;
    else r.not_inspected = unnamed;
    return r;
}

}  // namespace troupe::detail

namespace troupe {

const char* to_string(worker_threads w) noexcept {
    switch (w) {
    case worker_threads::from_environment: return "from_environment";
    case worker_threads::kernel: return "kernel";
    case worker_threads::user: return "user";
    }
    return "unknown";
}

const char* to_string(external_placement p) noexcept {
    switch (p) {
    case external_placement::grouped: return "grouped";
    case external_placement::spread: return "spread";
    }
    return "unknown";
}

}  // namespace troupe
