// troupe::dump and the wait-for cycles (troupe/dump.hpp). Reads the
// registry under its lock; every field of another thread it reads is an
// atomic (a wait record, a context's permit word, a processor's shown
// fiber), so a dump may run beside the program.
#include "troupe/dump.hpp"

#include <unistd.h>

#include <algorithm>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "diag/dump_snapshot.hpp"
#include "troupe/cluster.hpp"

namespace troupe::detail {

namespace {
const char* cluster_name(const cluster_impl* c) { return c && c->name ? c->name : "(unnamed)"; }

void write_seconds(std::ostream& os, std::int64_t ns) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(ns < 10'000'000'000 ? 3 : 1) << double(ns) / 1e9 << " s";
    os << s.str();
}
}  // namespace

std::vector<thread_view> snapshot_threads(registry& r) {
    std::vector<thread_view> out;
    out.reserve(r.fibers.size + r.os_threads.size);
    // Which processor runs which fiber now.
    std::map<const context*, const processor*> running;
    for (cluster_impl* c : r.cluster_list())
        for (std::size_t i = 0; i < c->processor_count(); ++i)
            if (processor* p = c->active_at(i))
                if (fiber* f = p->shown.load(std::memory_order_relaxed)) running[f] = p;
    auto view = [&](context& c) {
        thread_view v;
        v.c = &c;
        v.id = context_access::id(c);
        v.name = context_access::name(c);
        v.user = c.is_user_thread();
        if (v.user) {
            auto& f = static_cast<fiber&>(c);
            v.home = f.home;
            v.finished = f.joiner.load(std::memory_order_acquire) == done_marker;
            if (auto it = running.find(&c); it != running.end()) v.running_on = it->second;
        } else {
            v.tid = static_cast<os_context&>(c).tid;
        }
        v.parked = context_access::parked(c);
        const wait_reason& w = context_access::wait(c);
        v.seq = w.seq.load(std::memory_order_acquire);
        if (v.seq & 1) {
            v.kind = w.kind.load(std::memory_order_acquire);
            // acquire loads: the sequence's re-read below comes after them.
            v.res_name = w.name.load(std::memory_order_acquire);
            v.resource = w.resource.load(std::memory_order_acquire);
            stamp_wait(const_cast<wait_reason&>(w));  // first seen now, if nobody timed it
            v.since_ns = w.since_ns.load(std::memory_order_relaxed);
            v.until_ns = w.until_ns.load(std::memory_order_acquire);
            const wait_describer* d = w.describer.load(std::memory_order_acquire);
            if (v.kind && d) {
                // Only while the waiter is still in this wait: it may free
                // the resource as soon as it leaves (wait_pin).
                const wait_pin pin(w, v.seq);
                if (pin.held()) {
                    if (d->holder) {
                        v.holder = d->holder(v.resource);
                        v.describer = d;
                        if (d->relation) v.relation = d->relation;
                        if (v.holder == v.c) {
                            // Handed over (a lock names its next owner
                            // before waking it): no edge.
                            v.holder = nullptr;
                            v.handed = true;
                        }
                    }
                    if (d->details) v.details = d->details(v.resource);
                }
            }
            if (w.seq.load(std::memory_order_acquire) != v.seq) {
                v.kind = nullptr;  // it moved on while we looked
                v.holder = nullptr;
                v.handed = false;
                v.details.clear();
                v.moved = true;
            }
        }
        out.push_back(std::move(v));
    };
    for (context* c = r.fibers.head; c; c = context_access::next(*c)) view(*c);
    for (context* c = r.os_threads.head; c; c = context_access::next(*c)) view(*c);
    std::sort(out.begin(), out.end(),
              [](const thread_view& a, const thread_view& b) { return a.id < b.id; });
    return out;
}

std::string format_wait(const thread_view& v) {
    std::ostringstream os;
    os << v.kind;
    if (v.res_name) os << " '" << v.res_name << "'";
    os << " (" << v.resource << ")";
    return os.str();
}

std::vector<std::string> find_cycles(const std::vector<thread_view>& views) {
    std::map<const context*, std::size_t> index;
    for (std::size_t i = 0; i < views.size(); ++i) index[views[i].c] = i;
    // Each waiting thread has at most one outgoing edge: walk from each
    // node, colouring the path; meeting the current path closes a cycle.
    std::vector<int> colour(views.size(), 0);  // 0 new, 1 on the path, 2 done
    std::vector<std::string> cycles;
    for (std::size_t start = 0; start < views.size(); ++start) {
        std::vector<std::size_t> path;
        std::size_t i = start;
        while (colour[i] == 0) {
            colour[i] = 1;
            path.push_back(i);
            const thread_view& v = views[i];
            auto it = v.kind && v.holder ? index.find(v.holder) : index.end();
            if (it == index.end()) break;
            i = it->second;
        }
        if (colour[i] == 1 && views[i].kind && views[i].holder && index.count(views[i].holder)) {
            // The cycle is path's tail from i; print it from its smallest id.
            auto from = std::find(path.begin(), path.end(), i);
            std::vector<std::size_t> cyc(from, path.end());
            std::rotate(cyc.begin(), std::min_element(cyc.begin(), cyc.end()), cyc.end());
            // Rule: every report is true. Each thread was read at its own
            // moment; report the cycle only if it held all at once.
            std::vector<read_edge_record> edges;
            edges.reserve(cyc.size());
            for (std::size_t k : cyc) {
                const thread_view& v = views[k];
                edges.push_back({v.c, v.seq, v.describer, v.resource, v.holder});
            }
            if (!confirm_cycle(edges.data(), edges.size())) {
                for (std::size_t k : path) colour[k] = 2;
                continue;
            }
            std::ostringstream os;
            os << "deadlock: " << describe_context(views[cyc[0]].c) << " waits for ";
            for (std::size_t k = 0; k < cyc.size(); ++k) {
                const thread_view& v = views[cyc[k]];
                if (k) os << ", which waits for ";
                os << format_wait(v) << " " << v.relation << " " << describe_context(v.holder);
            }
            cycles.push_back(os.str());
        }
        for (std::size_t k : path) colour[k] = 2;
    }
    return cycles;
}

void write_dump(registry& r, std::ostream& os) {
    const std::int64_t now = wait_clock_ns();
    const std::int64_t steady_now = now_ns();
    os << "troupe dump (pid " << ::getpid() << ")\n";
    for (cluster_impl* c : r.cluster_list()) {
        const std::size_t n = c->processor_count();
        os << "cluster '" << cluster_name(c) << "': " << n << " processor(s), " << c->live()
           << " live thread(s)\n";
        for (std::size_t i = 0; i < n; ++i) {
            processor* p = c->active_at(i);
            if (!p) continue;
            os << "  processor " << i << ": ";
            if (fiber* f = p->shown.load(std::memory_order_relaxed))
                os << "running " << describe_context(f);
            else if (p->asleep()) os << "asleep";
            else if (p->lent())
                os << "slot lent to an OS thread (lend_while_blocked; its own thread asleep)";
            else os << "idle (spinning or looking for work)";
            os << ", queue " << p->queue_length() << "\n";
        }
    }
    const std::vector<thread_view> views = snapshot_threads(r);
    auto write_thread = [&](const thread_view& v) {
        os << "  " << describe_context(v.c);
        if (v.user && r.cluster_count > 1) os << " [cluster '" << cluster_name(v.home) << "']";
        os << ": ";
        if (v.finished) {
            os << "finished (not joined yet)";
        } else if (v.kind) {
            os << "waiting for ";
            write_seconds(os, std::max<std::int64_t>(0, now - v.since_ns));
            os << " on " << format_wait(v);
            if (v.holder) os << " " << v.relation << " " << describe_context(v.holder);
            else if (v.handed) os << ", handed to it (waking)";
            if (!v.details.empty()) os << "; " << v.details;
            if (v.until_ns) {
                os << "; until ";
                write_seconds(os, v.until_ns - steady_now);
                os << " from now";
            }
            if (!v.parked) os << " (not parked: about to park, or woken)";
        } else if (v.running_on) {
            os << "running on processor " << v.running_on->index;
        } else if (v.parked) {
            os << "parked (troupe::park, no wait recorded)";
        } else if (v.moved) {
            os << "running (its wait ended as it was read)";
        } else {
            os << (v.user ? "ready" : "running");
        }
        os << "\n";
    };
    std::size_t users = 0, oss = 0;
    for (const auto& v : views) (v.user ? users : oss) += 1;
    os << "user threads (" << users << "):\n";
    for (const auto& v : views)
        if (v.user) write_thread(v);
    std::size_t blocked = 0;
    for (const auto& v : views)
        if (!v.user && v.kind) ++blocked;
    os << "OS threads blocked on troupe primitives (" << blocked << "):\n";
    for (const auto& v : views)
        if (!v.user && v.kind) write_thread(v);
    for (dump_section* s = r.sections; s; s = s->next) s->write(s->arg, os);
    const std::vector<std::string> cycles = find_cycles(views);
    for (const auto& c : cycles) os << c << "\n";
    if (cycles.empty()) os << "no deadlock cycle among lock owners and joined threads\n";
}

}  // namespace troupe::detail

namespace troupe {

void dump(std::ostream& os) {
    detail::registry& r = detail::the_registry();
    std::ostringstream text;  // formatted under the lock, written after it
    {
        std::lock_guard g{r.lock};
        detail::write_dump(r, text);
    }
    os << text.str() << std::flush;
}

std::vector<std::string> deadlock_cycles() {
    detail::registry& r = detail::the_registry();
    std::lock_guard g{r.lock};
    return detail::find_cycles(detail::snapshot_threads(r));
}

}  // namespace troupe
