// Request cycles across ranks: the engine's half of edge chasing (the
// payload and the book are cycles.hpp's; docs/remote.md, "Request cycles
// across ranks", says why it works this way).
//
// Invariants:
//   - Probes are bounded: a sweep sends at most one probe per published
//     actor blocked on an ask (at most probes_per_sweep of them), once per
//     probe_interval and only while replies are awaited; a probe is
//     forwarded only through blocked behaviours, never twice through one
//     wait, and is dropped at max_probe_hops.
//   - Nothing here blocks a pass: workers are read under wait pins (core's
//     protocol: a reader never waits for the waiter), the ask table's lock
//     and the name table's are held briefly, probes are shipped after the
//     name table is released.
//   - An actor is looked at only under names_.hold(), published, alive and
//     not finished (as a delivery does): it and its system are alive.
//     Identities read from a frame (records, sequences) are compared,
//     never dereferenced.
//   - A cycle is printed only while its initiator's wait is still the one
//     the confirmed probes started from (re-checked under a pin at each
//     dump or report).
#include <algorithm>
#include <cstdio>
#include <utility>

#include "engine.hpp"
#include "troupe/defaults/remote.hpp"
#include "troupe/detail/blocked_behaviour.hpp"

namespace troupe::remote::detail {

namespace cfg = troupe::defaults::remote;
using troupe::detail::blocked_behaviour;

namespace {

std::uint64_t record_id(const blocked_behaviour& b) noexcept {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(b.record));
}

// The initiator-to-be: blocked on an ask (local or remote); other waits are
// not followed.
bool on_an_ask(const blocked_behaviour& b) noexcept { return b.local_ask || b.on_future; }

}  // namespace

void engine::walk(probe& p, blocked_behaviour b, const void* subject, std::string self,
                  std::vector<outgoing_probe>& out) {
    const std::string here = " on rank " + std::to_string(rank);
    for (;;) {
        const std::uint64_t rec = record_id(b);
        if (!p.hops.empty() && p.initiator == rank && p.hops[0].rank == rank &&
            p.hops[0].record == rec && p.hops[0].seq == b.seq) {
            // Back at the wait it started from: a cycle (confirmed once a
            // later probe agrees).
            (void)cycles_.came_back(p);
            return;
        }
        for (const probe_hop& h : p.hops)
            if (h.rank == rank && h.record == rec && h.seq == b.seq)
                return;  // a loop that does not pass its initiator: not its cycle
        if (p.hops.size() >= max_probe_hops) return;
        probe_hop h;
        h.rank = rank;
        h.record = rec;
        h.seq = b.seq;
        h.subject = self + here;
        if (b.running != subject) h.behind = b.who;
        h.in = b.in;
        if (b.local_ask) {
            if (!b.ask_box) return;
            h.edge = "waits for the reply to its ask " + b.ask_message +
                     (b.ask_deadline ? " (an ask with a deadline)" : "") + " to";
            p.hops.push_back(std::move(h));
            blocked_behaviour next;
            if (!troupe::detail::blocked_behaviour_in(*b.ask_box, next)) return;
            subject = b.ask_target;
            self = b.asked;
            b = std::move(next);
            continue;
        }
        if (!b.on_future) return;
        ask_seen s;
        if (!asks_.find_by_reply(b.resource, s)) return;  // a future, but no remote ask's
        std::string edge = "waits for the reply to its remote ask '";
        edge += s.name;
        edge += '\'';
        if (s.deadline) edge += " (an ask with a deadline)";
        edge += " to";
        h.edge = std::move(edge);
        p.hops.push_back(std::move(h));
        if (s.to != rank) {
            out.push_back({s.to, s.target, std::move(p)});
            return;
        }
        // An ask to an actor of this rank through a remote reference.
        name_table::published* q = names_.find(s.target);
        if (!q || !q->a || q->a->finished()) return;
        blocked_behaviour next;
        if (!troupe::detail::blocked_behaviour_of(*q->a, next)) return;
        subject = q->a;
        self = next.self;
        if (!q->a->name() || !*q->a->name()) self += " published as \"" + q->name + "\"";
        b = std::move(next);
    }
}

void engine::ship_probes(std::vector<outgoing_probe>& out) noexcept {
    for (outgoing_probe& o : out) {
        try {
            byte_buffer& b = scratch();
            begin_frame(b, frame_kind::probe, "", 0, o.target, 0);
            byte_writer w{b};
            put_probe(w, o.p);
            end_frame(b);
            ship(o.to, b);
            probes_sent_.fetch_add(1, std::memory_order_relaxed);
        } catch (...) {
            // The rank has ended (rank_lost) or no memory: this probe is
            // lost; the next sweep sends another.
        }
    }
}

void engine::sweep_probes() noexcept {
    try {
        std::vector<outgoing_probe> out;
        {
            auto held = names_.hold();
            const std::uint64_t n = names_.count();
            const std::uint64_t take = std::min<std::uint64_t>(n, cfg::probes_per_sweep);
            for (std::uint64_t k = 0; k < take; ++k) {
                if (sweep_from_ > n) sweep_from_ = 1;
                const std::uint64_t id = sweep_from_++;
                name_table::published* p = names_.find(id);
                blocked_behaviour b;
                if (!p || !p->a || p->a->finished() ||
                    !troupe::detail::blocked_behaviour_of(*p->a, b) || !on_an_ask(b)) {
                    cycles_.forget(id);
                    continue;
                }
                probe pr;
                pr.initiator = rank;
                pr.key = id;
                const cycle_book::numbers num = cycles_.start(id, record_id(b), b.seq);
                pr.seq = num.seq;
                pr.base = num.base;
                std::string self = b.self;
                if (!p->a->name() || !*p->a->name()) self += " published as \"" + p->name + "\"";
                walk(pr, std::move(b), p->a, std::move(self), out);
            }
        }
        ship_probes(out);
    } catch (...) {
        // std::bad_alloc: no probes this time.
    }
}

void engine::handle_probe(const parsed_frame& f, byte_reader& payload, int from) {
    probe p;
    try {
        p = get_probe(payload);
        if (p.hops.empty()) throw truncated_payload("probe has no hops");
        if (p.initiator < 0 || p.initiator >= size)
            throw truncated_payload("probe's initiator rank " + std::to_string(p.initiator) +
                                    " does not exist");
    } catch (const std::exception& e) {
        report_malformed(from, "probe", e);
        return;
    }
    probes_received_.fetch_add(1, std::memory_order_relaxed);
    try {
        std::vector<outgoing_probe> out;
        {
            auto held = names_.hold();
            name_table::published* q = names_.find(f.h.target);
            // Gone, finished or idle: no wait to follow; the probe ends.
            if (!q || !q->a || q->a->finished()) return;
            blocked_behaviour b;
            if (!troupe::detail::blocked_behaviour_of(*q->a, b)) return;
            std::string self = b.self;
            if (!q->a->name() || !*q->a->name()) self += " published as \"" + q->name + "\"";
            walk(p, std::move(b), q->a, std::move(self), out);
        }
        ship_probes(out);
    } catch (...) {
        // std::bad_alloc: this probe ends here; its initiator sends another.
    }
}

std::vector<std::string> engine::cycles_now(bool& complete) {
    complete = true;
    std::vector<std::string> lines;
    const std::vector<cycle_book::cycle> found = cycles_.cycles();
    if (found.empty()) return lines;
    auto held = names_.try_hold();
    if (!held.owns_lock()) {
        complete = false;
        return lines;
    }
    std::vector<std::pair<std::uint64_t, std::uint32_t>> printed;  // one line per wait
    for (const cycle_book::cycle& c : found) {
        const std::pair<std::uint64_t, std::uint32_t> wait{c.record, c.seq};
        if (std::find(printed.begin(), printed.end(), wait) != printed.end()) continue;
        // Printed only while the initiator still waits where the cycle's
        // probes started.
        name_table::published* p = names_.find(c.key);
        blocked_behaviour b;
        if (!p || !p->a || p->a->finished() || !troupe::detail::blocked_behaviour_of(*p->a, b))
            continue;
        if (record_id(b) != c.record || b.seq != c.seq) continue;
        // Two published actors behind one blocked behaviour start probes
        // from the same wait: the cycle is printed once.
        printed.push_back(wait);
        lines.push_back(c.text);
    }
    return lines;
}

}  // namespace troupe::remote::detail
