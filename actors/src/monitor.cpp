// Monitors and links: per-actor records of who watches an actor, whom it
// watches and to whom it is linked, and the end of an actor that fires them.
// (About 500 lines in one file: every step works on the records under one
// lock, life_lock, whose invariants below would otherwise span two files.)
//
// Protocol on actor::life_ (one word per actor):
//   0          nobody ever watched or linked it;
//   odd        a tombstone: it ended unwatched (the reason kind << 1 | 1);
//   a pointer  its record (allocated by the first monitor or link, or by an
//              end whose reason carries text: a throw, an exit signal).
// Both the end (life_ended) and the first monitor/link change the word by
// compare-and-swap from 0, so exactly one of them wins: either the end left
// a tombstone (a later monitor reads the reason there and fires at once) or
// a record exists before the end (the end then fires it under the lock,
// after every entry added before). Everything in records is under one
// process-wide lock (`life_lock`): the operations are rare next to sends,
// and a second lock per record would need an order across pairs of actors.
#include <algorithm>
#include <cstdio>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "executor.hpp"
#include "troupe/error.hpp"
#include "troupe/monitor.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::detail {

constinit thread_local bool end_noted [[gnu::tls_model("initial-exec")]] = false;

struct life_access {
    static std::atomic<std::uintptr_t>& word(actor& a) noexcept { return a.life_; }
};

namespace {

struct life_record {
    actor* self = nullptr;
    executor* exec = nullptr;
    bool ended = false;
    bool trap = false;
    exit_reason reason;
    std::vector<life_entry> watchers;  // monitors on this actor
    std::vector<actor*> watching;      // actors this one monitors (one per monitor)
    std::vector<life_entry> links;     // linked actors, with their exit trampolines
    // Records of actors not ended yet (for the sweep of a stopped system).
    life_record* prev = nullptr;
    life_record* next = nullptr;
};

spinlock life_lock{"actor monitors and links"};
life_record* live_records = nullptr;  // under life_lock

// The reason of the end being processed on this thread: set by a poison
// pill, behaviour_threw (when the handler ends the actor) or an exit
// signal, taken by life_ended right after (same delivery, same thread).
struct end_hint {
    exit_reason::kind why = exit_reason::kind::finished;
    std::string what;
};
thread_local end_hint tls_end;  // valid while end_noted is set
// Set by life_end_as: its downs go straight to the mailboxes (it runs in a
// remote progress pass, which may be a waiting behaviour's park spin).
constinit thread_local bool deliver_external = false;

constexpr std::uintptr_t tomb(exit_reason::kind k) noexcept {
    return (static_cast<std::uintptr_t>(k) << 1) | 1;
}
static_assert(tomb(exit_reason::kind::finished) == worker_access::tomb_finished);
constexpr bool is_tomb(std::uintptr_t w) noexcept { return (w & 1) != 0; }
constexpr exit_reason::kind tomb_kind(std::uintptr_t w) noexcept {
    return static_cast<exit_reason::kind>(w >> 1);
}

executor* exec_of(actor& a) noexcept {
    mailbox* mb = worker_access::box(a);
    return mb ? mb->exec : nullptr;
}

void unlink_live(life_record* r) noexcept {
    if (r->prev) r->prev->next = r->next;
    else if (live_records == r) live_records = r->next;
    if (r->next) r->next->prev = r->prev;
    r->prev = r->next = nullptr;
}

// Under life_lock. The record of `a`, created if `create` and it has none;
// nullptr if it has none (or ended unwatched: `*tomb_out` then holds the
// word). Throws std::bad_alloc (nothing changed).
life_record* record_of(actor& a, bool create, std::uintptr_t* tomb_out = nullptr) {
    auto& word = life_access::word(a);
    std::uintptr_t w = word.load(std::memory_order_acquire);
    if (w != 0 && !is_tomb(w)) return reinterpret_cast<life_record*>(w);
    if (w == 0 && create) {
        auto* r = new life_record;
        r->self = &a;
        r->exec = exec_of(a);
        // acq_rel: against the end's CAS from 0 (exactly one wins).
        if (word.compare_exchange_strong(w, reinterpret_cast<std::uintptr_t>(r),
                                         std::memory_order_acq_rel, std::memory_order_acquire)) {
            r->next = live_records;
            if (live_records) live_records->prev = r;
            live_records = r;
            return r;
        }
        delete r;
        if (!is_tomb(w)) return reinterpret_cast<life_record*>(w);  // the end's own record
    }
    if (tomb_out) *tomb_out = w;
    return nullptr;
}

template <class M>
void deliver(const life_entry& e, const actor* who, const exit_reason& r) noexcept {
    M* m = nullptr;
    try {
        m = new M;
        m->who = who;
        m->reason = r;
        m->set_allocation(Delete);
    } catch (...) {
        delete m;
        report_misuse(describe("actor", user_type_name(e.names->actor).c_str(), e.other) +
                          ": no memory for its " + (std::is_same_v<M, down> ? "down" : "exit") +
                          " message; lost",
                      misuse_kind::lost_message);
        return;
    }
    if (e.direct) {
        e.fn(e.other, *m);  // owns m
        return;
    }
    executor* ex = exec_of(*e.other);
    if (ex && ex->stopped.load(std::memory_order_acquire)) {
        delete m;  // its system stopped: nobody would ever receive it
        return;
    }
    try {
        if (deliver_external) send_external(*e.other, *m, e.fn, *e.names);
        else send(*e.other, *m, e.fn, *e.names);  // a refused send freed it
    } catch (...) {
        delete m;
        report_misuse(describe("actor", user_type_name(e.names->actor).c_str(), e.other) +
                          ": no memory to queue its " +
                          (std::is_same_v<M, down> ? "down" : "exit") + " message; lost",
                      misuse_kind::lost_message);
    }
}

template <class V, class P>
void erase_if(V& v, P&& p) {
    v.erase(std::remove_if(v.begin(), v.end(), std::forward<P>(p)), v.end());
}

// Under life_lock: ends record r (not ended yet) with `why`; moves what
// must be delivered into the out-vectors.
void end_record(life_record& r, exit_reason why, std::vector<life_entry>& downs,
                std::vector<life_entry>& exits) {
    r.ended = true;
    r.reason = std::move(why);
    unlink_live(&r);
    actor* const me = r.self;
    // Our monitors on others die with us; so do our links (both sides).
    for (actor* watched : r.watching)
        if (watched != me)
            if (life_record* o = record_of(*watched, false))
                erase_if(o->watchers, [me](const life_entry& e) { return e.other == me; });
    r.watching.clear();
    for (const life_entry& l : r.links)
        if (life_record* o = record_of(*l.other, false))
            erase_if(o->links, [me](const life_entry& e) { return e.other == me; });
    for (const life_entry& w : r.watchers) {
        if (w.other == me) continue;  // an actor cannot hear its own end
        downs.push_back(w);
        // Its watcher no longer watches it: the watcher's end must not look
        // at us (we may be freed by then).
        if (life_record* o = record_of(*w.other, false)) {
            auto it = std::find(o->watching.begin(), o->watching.end(), me);
            if (it != o->watching.end()) o->watching.erase(it);
        }
    }
    r.watchers.clear();
    exits.swap(r.links);
}

void fire(const actor* who, const exit_reason& r, const std::vector<life_entry>& downs,
          const std::vector<life_entry>& exits) noexcept {
    for (const life_entry& e : downs) deliver<down>(e, who, r);
    for (const life_entry& e : exits) deliver<exit_msg>(e, who, r);
}

}  // namespace

const char* kind_name(exit_reason::kind k) noexcept {
    switch (k) {
    case exit_reason::kind::finished: return "finished";
    case exit_reason::kind::poison_pill: return "poison pill";
    case exit_reason::kind::threw: return "threw";
    case exit_reason::kind::linked: return "exit signal from a linked actor";
    case exit_reason::kind::system_stopped: return "actor system stopped";
    case exit_reason::kind::rank_lost: return "rank lost";
    case exit_reason::kind::destroyed: return "destroyed before it finished";
    }
    return "?";
}

void note_poison_pill() noexcept {
    end_noted = true;
    tls_end.why = exit_reason::kind::poison_pill;
    tls_end.what.clear();
}

// behaviour_threw (actor.cpp), when the handler ends the actor.
void note_threw(const std::string& exception_type, const std::string& what) noexcept {
    end_noted = true;
    tls_end.why = exit_reason::kind::threw;
    try {
        tls_end.what = exception_type.empty() ? what : exception_type + ": " + what;
    } catch (...) {
        tls_end.what.clear();  // the kind is still right
    }
}

allocation exit_received(actor& a, exit_msg& e) noexcept {
    if (!e.reason.failure()) return Nodelete;  // a normal end does not kill
    (void)a;
    end_noted = true;
    tls_end.why = exit_reason::kind::linked;
    try {
        tls_end.what =
            describe("linked actor", nullptr, e.who) + " ended (" + e.reason.to_string() + ")";
    } catch (...) {
        tls_end.what.clear();
    }
    // Finished, never Delete: a second exit may already be queued for it.
    return Finished;
}

void life_ended(actor& a, allocation how) noexcept {
    exit_reason why;
    if (end_noted) {
        why.why = tls_end.why;
        why.what = std::move(tls_end.what);
        end_noted = false;
        tls_end.what.clear();
    }
    auto& word = life_access::word(a);
    std::uintptr_t w = word.load(std::memory_order_acquire);
    if (w == 0) {
        // Unwatched. A reason with text is kept in a record if the storage
        // stays (Finished), for a monitor placed later; else a tombstone.
        std::uintptr_t desired = tomb(why.why);
        life_record* kept = nullptr;
        if (!why.what.empty() && how == Finished) {
            kept = new (std::nothrow) life_record;
            if (kept) {
                kept->self = &a;
                kept->ended = true;
                kept->reason = why;
                desired = reinterpret_cast<std::uintptr_t>(kept);
            }
        }
        // acq_rel: against a first monitor's CAS from 0.
        if (word.compare_exchange_strong(w, desired, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
            return;
        delete kept;  // a monitor installed a record first: fire it below
    }
    if (is_tomb(w)) return;  // ended twice cannot happen; be safe
    auto& r = *reinterpret_cast<life_record*>(w);
    std::vector<life_entry> downs, exits;
    life_lock.lock();
    if (r.ended) {  // its system stopped first (system_stopped swept it)
        life_lock.unlock();
        return;
    }
    try {
        end_record(r, why, downs, exits);
    } catch (...) {
        // No memory for the delivery list: fire in place, under the lock
        // (sends never take life_lock).
        for (const life_entry& e : r.watchers)
            if (e.other != &a) deliver<down>(e, &a, r.reason);
        r.watchers.clear();
    }
    life_lock.unlock();
    // Fired with our copy of the reason: once a watcher has its down, it
    // may free the actor (a Finished one), and with it the record.
    fire(&a, why, downs, exits);
}

void life_end_as(actor& a, exit_reason why) noexcept {
    end_noted = true;
    tls_end.why = why.why;
    tls_end.what = std::move(why.what);
    deliver_external = true;
    life_ended(a, Finished);
    deliver_external = false;
}

void life_destroyed(actor& a) noexcept {
    end_noted = true;
    tls_end.why = exit_reason::kind::destroyed;
    tls_end.what.clear();
    life_ended(a, Delete);
}

void life_free(actor& a) noexcept {
    auto& word = life_access::word(a);
    const std::uintptr_t w = word.load(std::memory_order_acquire);
    if (w == 0 || is_tomb(w)) return;
    auto* r = reinterpret_cast<life_record*>(w);
    life_lock.lock();
    if (!r->ended) {
        // Destroyed while its system had stopped (it never ended): forget it
        // as an ended one so nobody keeps a pointer to it.
        std::vector<life_entry> downs, exits;
        exit_reason why;
        why.why = exit_reason::kind::destroyed;
        try {
            end_record(*r, why, downs, exits);
        } catch (...) {}
        life_lock.unlock();
        fire(&a, r->reason, downs, exits);
        life_lock.lock();
    }
    word.store(tomb(r->reason.why), std::memory_order_release);
    life_lock.unlock();
    delete r;
}

bool add_monitor(actor& watcher, actor& watched, const life_entry& e) {
    exit_reason at_once;
    bool now = false;
    life_lock.lock();
    try {
        life_record* wr = record_of(watcher, true);
        if (!wr || wr->ended) {
            life_lock.unlock();
            return false;
        }
        std::uintptr_t t = 0;
        life_record* vr = record_of(watched, true, &t);
        executor* vex = exec_of(watched);
        if (!vr) {
            at_once.why = tomb_kind(t);
            now = true;
        } else if (vr->ended) {
            at_once = vr->reason;
            now = true;
        } else if (vex && vex->stopped.load(std::memory_order_acquire) &&
                   worker_access::alive(watched)) {
            // Its system stopped under it: it will never run again.
            std::vector<life_entry> downs, exits;
            exit_reason why;
            why.why = exit_reason::kind::system_stopped;
            end_record(*vr, why, downs, exits);
            at_once = vr->reason;
            now = true;
            life_lock.unlock();
            fire(&watched, at_once, downs, exits);
            deliver<down>(e, &watched, at_once);
            return true;
        } else {
            vr->watchers.push_back(e);
            try {
                wr->watching.push_back(&watched);
            } catch (...) {
                vr->watchers.pop_back();
                throw;
            }
        }
    } catch (...) {
        life_lock.unlock();
        throw;
    }
    life_lock.unlock();
    if (now) deliver<down>(e, &watched, at_once);
    return true;
}

bool remove_monitor(actor& watcher, actor& watched) noexcept {
    life_lock.lock();
    bool removed = false;
    life_record* vr = record_of(watched, false);
    life_record* wr = record_of(watcher, false);
    if (vr && wr) {
        const auto before = vr->watchers.size();
        erase_if(vr->watchers, [&](const life_entry& x) { return x.other == &watcher; });
        removed = vr->watchers.size() != before;
        erase_if(wr->watching, [&](actor* x) { return x == &watched; });
    }
    life_lock.unlock();
    return removed;
}

bool add_link(actor& a, actor& b, const life_entry& to_a, const life_entry& to_b) {
    if (&a == &b) return false;
    life_lock.lock();
    const actor* dead = nullptr;
    life_entry signal{};
    exit_reason why;
    try {
        std::uintptr_t ta = 0, tb = 0;
        life_record* ra = record_of(a, true, &ta);
        life_record* rb = record_of(b, true, &tb);
        const bool a_over = !ra || ra->ended, b_over = !rb || rb->ended;
        if (a_over || b_over) {
            if (!(a_over && b_over)) {
                // The live one hears of the other's end at once.
                dead = a_over ? &a : &b;
                signal = a_over ? to_b : to_a;
                life_record* d = a_over ? ra : rb;
                if (d) why = d->reason;
                else why.why = tomb_kind(a_over ? ta : tb);
            }
        } else if (std::none_of(ra->links.begin(), ra->links.end(),
                                [&](const life_entry& x) { return x.other == &b; })) {
            ra->links.push_back(to_b);
            try {
                rb->links.push_back(to_a);
            } catch (...) {
                ra->links.pop_back();
                throw;
            }
        }
    } catch (...) {
        life_lock.unlock();
        throw;
    }
    life_lock.unlock();
    if (dead) {
        deliver<exit_msg>(signal, dead, why);
        return false;
    }
    return true;
}

bool remove_link(actor& a, actor& b) noexcept {
    life_lock.lock();
    bool removed = false;
    life_record* ra = record_of(a, false);
    life_record* rb = record_of(b, false);
    if (ra && rb) {
        const auto before = ra->links.size();
        erase_if(ra->links, [&](const life_entry& x) { return x.other == &b; });
        erase_if(rb->links, [&](const life_entry& x) { return x.other == &a; });
        removed = ra->links.size() != before;
    }
    life_lock.unlock();
    return removed;
}

void set_trap_exits(actor& a, bool on) {
    life_lock.lock();
    try {
        if (life_record* r = record_of(a, true)) r->trap = on;
    } catch (...) {
        life_lock.unlock();
        throw;
    }
    life_lock.unlock();
}

bool traps_exits(const actor& a) noexcept {
    life_lock.lock();
    const life_record* r = record_of(const_cast<actor&>(a), false);
    const bool on = r && r->trap;
    life_lock.unlock();
    return on;
}

// executor::stop gave up: the survivors of `ex` that someone watches end
// for their watchers and links (system_stopped). Nothrow.
void life_system_stopped(executor& ex) noexcept {
    std::vector<std::pair<actor*, std::vector<life_entry>>> todo_downs, todo_exits;
    exit_reason why;
    why.why = exit_reason::kind::system_stopped;
    life_lock.lock();
    try {
        for (life_record* r = live_records; r;) {
            life_record* next = r->next;
            if (r->exec == &ex && !r->ended) {
                std::vector<life_entry> downs, exits;
                end_record(*r, why, downs, exits);
                todo_downs.emplace_back(r->self, std::move(downs));
                todo_exits.emplace_back(r->self, std::move(exits));
            }
            r = next;
        }
    } catch (...) {
        // No memory: the watchers of the rest are not told.
    }
    life_lock.unlock();
    for (auto& [who, v] : todo_downs)
        for (const life_entry& e : v) deliver<down>(e, who, why);
    for (auto& [who, v] : todo_exits)
        for (const life_entry& e : v) deliver<exit_msg>(e, who, why);
}

}  // namespace troupe::detail

namespace troupe {

std::string exit_reason::to_string() const {
    std::string s = detail::kind_name(why);
    if (!what.empty()) s += ": " + what;
    return s;
}

const char* to_string(exit_reason::kind k) noexcept { return detail::kind_name(k); }

}  // namespace troupe
