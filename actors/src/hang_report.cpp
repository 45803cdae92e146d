// What the workers of a running actor system are doing, for troupe::dump and
// stop reports (docs/actors.md, "Hang reports"): which actor and message
// each worker runs, what a blocked behaviour waits on, the request cycles
// among blocked behaviours; and the registry of trampolines that names a
// delivery's types.
//
// A worker blocked inside a behaviour is read while its wait record is
// pinned (wait_pin): the worker cannot leave that wait meanwhile, so its
// running actor, batch and ask note (plain fields it wrote before the wait)
// are stable and the actors it names are alive. A worker that is not in a
// recorded wait is described from single atomic words only (its batch
// stamp, the latest delivery's trampoline): nothing it points to is read.
#include <algorithm>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <typeinfo>
#include <unordered_set>

#include "executor.hpp"
#include "troupe/detail/blocked_behaviour.hpp"
#include "troupe/error.hpp"
#include "troupe/future.hpp"

namespace troupe::detail {

namespace {
// Entries are pushed at load time and never removed (a library unloaded
// with dlclose leaves its entries behind; such a program must not dump
// afterwards).
constinit std::atomic<const trampoline_entry*> g_trampolines{nullptr};
}  // namespace

trampoline_entry::trampoline_entry(dispatch_fn f, const dispatch_names& n) noexcept
    : fn(f), names(&n) {
    const trampoline_entry* h = g_trampolines.load(std::memory_order_relaxed);
    // release: a reader that finds this entry sees its fields.
    do next = h;
    while (!g_trampolines.compare_exchange_weak(h, this, std::memory_order_release,
                                                std::memory_order_relaxed));
}

const dispatch_names* trampoline_names(dispatch_fn fn) noexcept {
    if (!fn) return nullptr;
    for (const trampoline_entry* e = g_trampolines.load(std::memory_order_acquire); e; e = e->next)
        if (e->fn == fn) return e->names;
    return nullptr;
}

namespace {

std::string seconds(std::int64_t ns) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(ns < 10'000'000'000 ? 3 : 1) << double(ns) / 1e9 << " s";
    return s.str();
}

std::int64_t steady_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The age of a batch stamp (timestamp() ticks), converted with the ticks
// and nanoseconds since the executor was made; -1 if unknown (no batch, or
// an executor too young for the ratio to mean anything).
std::int64_t batch_age_ns(const executor& ex, std::uint64_t began) noexcept {
    if (began == 0) return -1;
    const std::uint64_t t = timestamp();
    const std::int64_t n = steady_ns() - ex.born_ns;
    if (n < 1'000'000 || t <= ex.born_ticks || t < began) return -1;
    return static_cast<std::int64_t>(double(t - began) * double(n) / double(t - ex.born_ticks));
}

std::string address(const void* p) {
    std::ostringstream s;
    s << p;
    return s.str();
}

std::string type_of(const actor& a) { return user_type_name(demangle(typeid(a).name())); }

// An actor known to be alive: "actor 'pinger' (ping_actor)", or
// "actor ping_actor (0x...)" when it has no name.
std::string actor_text(const actor& a) {
    const char* n = a.name();
    if (n && *n) return "actor '" + std::string(n) + "' (" + type_of(a) + ")";
    return "actor " + type_of(a) + " (" + address(&a) + ")";
}

// The actor a behaviour asked, which may have ended since: never
// dereferenced; its name as read when it was asked, its static type.
std::string asked_text(const worker::ask_note& n) {
    const std::string type = n.names ? user_type_name(n.names->actor) : "actor";
    if (n.target_name && *n.target_name)
        return "actor '" + std::string(n.target_name) + "' (" + type + ")";
    return "actor " + type + " (" + address(n.target) + ")";
}

std::string message_of(const dispatch_names* names) {
    if (!names) return "a runtime message";
    // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on
    // "'" + std::string.
    std::string s(1, '\'');
    s += user_type_name(names->message);
    s += '\'';
    return s;
}

// One worker as read.
struct look {
    const worker* w = nullptr;
    bool blocked = false;  // inside a behaviour, in a recorded wait (pinned while read)
    const wait_reason* rec = nullptr;
    std::uint32_t seq = 0;
    const actor* running = nullptr;
    const mailbox* batch = nullptr;
    std::string who;  // actor_text(running)
    std::string msg;  // the message being received
    std::string wait;
    std::string details;
    const void* resource = nullptr;
    bool on_future = false;
    std::int64_t since_ns = 0, until_ns = 0;
    bool on_ask = false;  // the wait is on the reply to the behaviour's latest ask
    worker::ask_note ask;
    const future_base* reply = nullptr;
    held_batch held;
};

// Reads worker w (and the actors of the batch it holds, if `batch`).
// Throws std::bad_alloc.
look read_worker(const worker& w, bool batch = true) {
    look l;
    l.w = &w;
    const context* c = w.ctx.load(std::memory_order_acquire);
    if (!c) return l;
    const wait_reason& r = wait_record_of(*c);
    const std::uint32_t s = r.seq.load(std::memory_order_acquire);
    if (!(s & 1)) return l;
    const wait_pin pin(r, s);
    if (!pin.held()) return l;
    // acquire: the worker's writes before its wait began (running actor,
    // batch, ask note) are visible once its kind is (stored after them,
    // release; the kind read before this wait began is null).
    const char* kind = r.kind.load(std::memory_order_acquire);
    if (!kind) return l;
    const actor* a = w.running_actor();
    const mailbox* b = w.batch_mailbox();
    if (!a || !b) return l;  // a wait outside any behaviour (an idle park)
    l.blocked = true;
    l.rec = &r;
    l.seq = s;
    l.running = a;
    l.batch = b;
    l.who = actor_text(*a);
    l.msg = message_of(trampoline_names(w.running_fn()));
    const char* name = r.name.load(std::memory_order_acquire);
    const void* resource = r.resource.load(std::memory_order_acquire);
    l.wait = std::string(kind) + (name ? " '" + std::string(name) + "'" : std::string()) + " (" +
             address(resource) + ")";
    stamp_wait(const_cast<wait_reason&>(r));
    l.since_ns = r.since_ns.load(std::memory_order_relaxed);
    l.until_ns = r.until_ns.load(std::memory_order_acquire);
    if (const wait_describer* d = r.describer.load(std::memory_order_acquire); d && d->details)
        l.details = d->details(resource);
    l.resource = resource;
    l.on_future = std::strcmp(kind, "future") == 0;
    if (w.asked.reply && w.asked.reply == resource && l.on_future) {
        l.on_ask = true;
        l.ask = w.asked;
        l.reply = static_cast<const future_base*>(resource);
    }
    if (!batch) return l;
    // The actors of the batch it holds: the mailbox's settled actors (its
    // registry, touched only by the worker holding the batch) and the
    // receivers of the rest of the batch not yet registered.
    l.held.box = b;
    l.held.rec = &r;
    l.held.seq = s;
    auto add = [&](const actor* x) {
        l.held.actors.push_back(x);
        l.held.types.push_back(type_of(*x));
    };
    for (actor* x = b->settled; x; x = worker_access::next(x)) add(x);  // no duplicates
    // Unregistered receivers are not in the registry; one may have several
    // envelopes.
    std::unordered_set<const actor*> queued;
    const copy_queue& rest = w.batch_rest();
    for (std::uint32_t k = 0; k < rest.size() && k < max_scanned_envelopes; ++k) {
        const actor* x = rest.front()[k].receiver;
        if (worker_access::alive(*x) && !worker_access::registered(*x) && queued.insert(x).second)
            add(x);
    }
    l.held.complete = rest.size() <= max_scanned_envelopes;
    return l;
}

// Whether l's wait is still the one read (and its reply still unanswered):
// re-read under a new pin.
bool still_waiting(const look& l) noexcept {
    const wait_pin pin(*l.rec, l.seq);
    if (!pin.held()) return false;
    return !l.reply || !l.reply->available();
}

std::string in_text(const look& l) {
    return "(worker " + std::to_string(l.w->index) + ", in its receive of " + l.msg + ")";
}

}  // namespace

workers_view look_at_workers(executor& ex) {
    workers_view v;
    const std::size_t n = ex.workers.size();
    std::vector<look> looks;
    looks.reserve(n);
    for (std::size_t i = 0; i < n; ++i) looks.push_back(read_worker(*ex.workers[i]));
    for (const look& l : looks) v.is_blocked.push_back(l.blocked);
    const std::int64_t now = wait_clock_ns();
    const std::int64_t steady_now = steady_ns();
    for (const look& l : looks) {
        const worker& w = *l.w;
        std::string s = "worker " + std::to_string(w.index) + ": ";
        const std::int64_t age = batch_age_ns(ex, w.batch_began.load(std::memory_order_relaxed));
        if (l.blocked) {
            ++v.blocked;
            s += "in " + l.who + ", receiving " + l.msg;
            if (age >= 0) s += " (its batch began " + seconds(age) + " ago)";
            s += "; blocked for " + seconds(std::max<std::int64_t>(0, now - l.since_ns)) + " on " +
                 l.wait;
            if (l.on_ask) {
                s += ", the reply to its ask " + message_of(l.ask.names) + " to " +
                     asked_text(l.ask);
                if (l.ask.deadline) s += " (an ask with a deadline)";
            }
            if (!l.details.empty()) s += "; " + l.details;
            if (l.until_ns) s += "; until " + seconds(l.until_ns - steady_now) + " from now";
            v.held.push_back(l.held);
        } else if (age >= 0 || w.batch_began.load(std::memory_order_relaxed) != 0) {
            s += "in a batch";
            if (age >= 0) s += " for " + seconds(age);
            s += ", not in a troupe wait (a behaviour running, or blocked outside troupe)";
            if (const dispatch_names* d = trampoline_names(w.running_fn()))
                s += "; latest delivery: " + message_of(d) + " to a " + user_type_name(d->actor);
        } else {
            if (w.napping.load(std::memory_order_relaxed))
                s += "idle (napping: its batches handed most of their sends to other workers, "
                     "which run its mailboxes meanwhile)";
            else s += w.dozing.load(std::memory_order_relaxed) ? "idle (asleep)" : "idle";
        }
        v.lines.push_back(std::move(s));
    }

    // The wait-for graph among blocked behaviours: worker i's behaviour
    // waits for the reply of its ask to actor T. T runs in worker j's
    // blocked behaviour, or waits in the batch worker j holds (queued
    // behind j's behaviour), or, when every worker is blocked, in a
    // mailbox no worker can take (starved).
    constexpr std::size_t none = static_cast<std::size_t>(-1), starved = none - 1;
    const bool all_blocked = n != 0 && v.blocked == n;
    std::vector<std::size_t> edge(n, none);
    for (std::size_t i = 0; i < n; ++i) {
        const look& l = looks[i];
        // still_waiting reads the reply under a new pin: once the wait ends,
        // the future (on the behaviour's stack) may be gone.
        if (!l.blocked || !l.on_ask || l.ask.deadline || !still_waiting(l)) continue;
        // An actor of another system (or of none) is not followed: other
        // workers may run it.
        if (!l.ask.target_box || l.ask.target_box->exec != &ex) continue;
        for (std::size_t j = 0; j < n; ++j)
            if (looks[j].blocked && looks[j].batch == l.ask.target_box) edge[i] = j;
        if (edge[i] == none && all_blocked) edge[i] = starved;
    }
    bool every_wait_an_ask = all_blocked;
    for (std::size_t i = 0; i < n; ++i) every_wait_an_ask = every_wait_an_ask && edge[i] != none;

    // One clause per edge: "actor 'a' (A) (worker 0, in its receive of
    // 'go') waits for its ask 'ping' to actor 'b' (B)".
    auto clause = [&](std::size_t i) {
        const look& l = looks[i];
        std::string s = "waits for the reply to its ask " + message_of(l.ask.names) + " to ";
        const std::size_t j = edge[i];
        if (j == starved) return s + asked_text(l.ask);
        if (looks[j].running == l.ask.target) return s + looks[j].who;
        return s + asked_text(l.ask) + ", queued behind the behaviour of " + looks[j].who +
               " in its mailbox";
    };
    // Re-check before listing (every report is true): each wait still the
    // one read with its reply unanswered, then every sequence unchanged, so
    // all the edges held together at the moment between the two passes.
    auto confirm = [&](const std::vector<std::size_t>& nodes) {
        for (std::size_t i : nodes)
            if (!still_waiting(looks[i])) return false;
        for (std::size_t i : nodes)
            if (looks[i].rec->seq.load(std::memory_order_acquire) != looks[i].seq) return false;
        return true;
    };
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;

    std::vector<int> colour(n, 0);  // 0 new, 1 on the path, 2 done
    for (std::size_t start = 0; start < n; ++start) {
        std::vector<std::size_t> path;
        std::size_t i = start;
        while (i < n && colour[i] == 0) {
            colour[i] = 1;
            path.push_back(i);
            i = edge[i];
        }
        std::vector<std::size_t> cyc;
        std::string text;
        if (i < n && colour[i] == 1) {
            // A cycle: path's tail from i, written from its smallest worker.
            cyc.assign(std::find(path.begin(), path.end(), i), path.end());
            std::rotate(cyc.begin(), std::min_element(cyc.begin(), cyc.end()), cyc.end());
            text = "request cycle: " + looks[cyc[0]].who + " " + in_text(looks[cyc[0]]) + " " +
                   clause(cyc[0]);
            for (std::size_t k = 1; k < cyc.size(); ++k)
                text += ", which " + in_text(looks[cyc[k]]) + " " + clause(cyc[k]);
        } else if (i == starved && !path.empty()) {
            // The chain ends in an actor no worker can run: with every
            // worker waiting on an ask, that is a cycle through the
            // workers themselves.
            text = std::string(every_wait_an_ask ? "request cycle: " : "stuck: ") +
                   looks[path[0]].who + " " + in_text(looks[path[0]]) + " " + clause(path[0]);
            for (std::size_t k = 1; k < path.size(); ++k)
                text += ", which " + in_text(looks[path[k]]) + " " + clause(path[k]);
            text += ", which cannot run: every worker (" + std::to_string(n) +
                    ") is blocked inside a behaviour" +
                    (every_wait_an_ask ? ", each waiting for a reply" : "");
            cyc = all;  // every worker's wait is part of the claim
        }
        for (std::size_t k : path) colour[k] = 2;
        if (!text.empty() && confirm(cyc)) v.cycles.push_back(std::move(text));
    }
    if (all_blocked && confirm(all)) {
        v.all_blocked = "every worker (" + std::to_string(n) + ") is blocked inside a behaviour: ";
        for (std::size_t i = 0; i < n; ++i) {
            if (i) v.all_blocked += "; ";
            v.all_blocked += v.lines[i];
        }
    }
    return v;
}

bool blocked_behaviour_in(const mailbox& box, blocked_behaviour& out) {
    if (!box.exec) return false;
    for (const std::unique_ptr<worker>& w : box.exec->workers) {
        // One worker at most holds the mailbox's batch.
        const look l = read_worker(*w, false);
        if (!l.blocked || l.batch != &box) continue;
        // Re-pinned to read what the first look left out; the wait must
        // still be the one read.
        const wait_pin pin(*l.rec, l.seq);
        if (!pin.held()) return false;
        // Under the pin the resource is alive: a future that is already
        // fulfilled is about to wake its waiter.
        if (l.on_future && static_cast<const future_base*>(l.resource)->available()) return false;
        out.record = l.rec;
        out.seq = l.seq;
        out.running = l.running;
        out.who = l.who;
        out.in = in_text(l);
        out.wait = l.wait;
        out.resource = l.resource;
        out.on_future = l.on_future;
        out.local_ask = l.on_ask;
        out.ask_deadline = l.on_ask && l.ask.deadline;
        out.ask_target = l.on_ask ? l.ask.target : nullptr;
        out.ask_box = l.on_ask ? l.ask.target_box : nullptr;
        out.asked = l.on_ask ? asked_text(l.ask) : std::string();
        out.ask_message = l.on_ask ? message_of(l.ask.names) : std::string();
        return true;
    }
    return false;
}

bool blocked_behaviour_of(const actor& a, blocked_behaviour& out) {
    const mailbox* box = worker_access::box(a);
    if (!box || !blocked_behaviour_in(*box, out)) return false;
    out.self = actor_text(a);
    return true;
}

}  // namespace troupe::detail
