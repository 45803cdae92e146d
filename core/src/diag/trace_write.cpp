// Writing the execution trace as Chrome trace event JSON (docs/trace.md):
// collect every ring's surviving events (the read side of the rings'
// seqlock, trace_ring.hpp), convert TSC ticks to nanoseconds, number the
// user threads' lives and name them, pair each wake with the arrival it
// caused (flow arrows), and print one JSON object per event.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "diag/trace_ring.hpp"
#include "troupe/detail/trace.hpp"

namespace troupe::detail::trace {

namespace {

struct item {
    event e;
    long tid;
};

// A JSON string body (no quotes) with the characters JSON needs escaped.
std::string json_escape(const char* s) {
    std::string out;
    for (; s && *s; ++s) {
        const auto c = static_cast<unsigned char>(*s);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\u%04x", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

const char* end_name(std::uint8_t how) noexcept {
    switch (static_cast<slice_end>(how)) {
    case slice_end::park: return "park";
    case slice_end::yield: return "yield";
    case slice_end::finish: return "finish";
    case slice_end::none: break;
    }
    return "switch";
}

const char* placed_name(std::uint8_t how) noexcept {
    switch (static_cast<placed>(how)) {
    case placed::os_thread: return "futex wake";
    case placed::handoff: return "hand-off";
    case placed::queued: return "queued";
    case placed::idle_member: return "idle wake";
    }
    return "?";
}

// Step 1. Copies every buffer's surviving events (the seqlock's read side,
// trace_ring.hpp): `dropped` counts those overwritten before or while
// they were read; `names` gets each labelled kernel thread's name.
std::vector<item> collect(std::uint64_t& dropped,
                          std::vector<std::pair<long, std::string>>& names) {
    std::vector<item> all;
    const std::size_t n = std::min(buffers_used.load(std::memory_order_acquire), max_buffers);
    for (std::size_t i = 0; i < n; ++i) {
        buffer* b = buffers[i].load(std::memory_order_acquire);
        if (!b) continue;
        if (b->labelled.load(std::memory_order_acquire)) names.emplace_back(b->os_tid, b->label);
        const std::uint64_t cap = b->mask + 1;
        const std::uint64_t h1 = b->head.load(std::memory_order_acquire);
        const std::uint64_t first = h1 > cap ? h1 - cap : 0;
        std::vector<event> copy(h1 - first);
        for (std::uint64_t k = first; k < h1; ++k) {
            auto* slot = reinterpret_cast<std::uint64_t*>(&b->ring[k & b->mask]);
            auto* out = reinterpret_cast<std::uint64_t*>(&copy[k - first]);
            // acquire (a plain load on x86): the second look at head
            // below cannot move before these reads (the seqlock's read
            // side; a fence would do the same, but TSan does not model it).
            for (std::size_t w = 0; w < event_words; ++w)
                out[w] = std::atomic_ref<std::uint64_t>(slot[w]).load(std::memory_order_acquire);
        }
        const std::uint64_t h2 = b->head.load(std::memory_order_relaxed);
        const std::uint64_t valid = std::max(first, h2 > cap ? h2 - cap : 0);
        dropped += valid;  // overwritten before (or while) we looked
        for (std::uint64_t k = valid; k < h1; ++k) all.push_back({copy[k - first], b->os_tid});
    }
    return all;
}

// Step 2. TSC ticks to nanoseconds, at the rate over the whole recording.
void ticks_to_ns(std::vector<item>& all) noexcept {
    if (!use_tsc.load(std::memory_order_relaxed)) return;
    const std::uint64_t ticks = now(), ns = steady_ns();
    const double per_tick = ticks > origin_ticks ? static_cast<double>(ns - origin_ns) /
                                                       static_cast<double>(ticks - origin_ticks)
                                                 : 1.0;
    auto to_ns = [&](std::uint64_t t) {
        return origin_ns +
               static_cast<std::uint64_t>(
                   static_cast<double>(t > origin_ticks ? t - origin_ticks : 0) * per_tick);
    };
    for (item& i : all) {
        i.e.t0 = to_ns(i.e.t0);
        i.e.t1 = to_ns(i.e.t1);
    }
}

// Step 3. User threads: a number per life (a descriptor's address is
// reused by the next thread made on the same pooled stack) and a name.
struct thread_lives {
    std::vector<std::uint64_t> id_of;   // per event: its thread's number (0: none)
    std::vector<std::string> name{""};  // per number
};

std::string name_from(const event& e, std::uint64_t id) {
    char copy[17] = {};
    std::memcpy(copy, &e.a, 8);
    std::memcpy(copy + 8, &e.b, 8);
    return std::string(copy) + " (" + std::to_string(id) + ")";
}

thread_lives number_threads(const std::vector<item>& all) {
    thread_lives t;
    t.id_of.assign(all.size(), 0);
    std::unordered_map<std::uint64_t, std::uint64_t> live_id;
    auto id_for = [&](std::uint64_t subject) {
        auto [it, fresh] = live_id.try_emplace(subject, t.name.size());
        if (fresh) t.name.push_back("thread " + std::to_string(it->second));
        return it->second;
    };
    for (std::size_t i = 0; i < all.size(); ++i) {
        const event& e = all[i].e;
        if (kind_of(e) == kind::rename) {
            // The name holds for the whole life (its earlier slices too).
            const std::uint64_t id = id_for(e.subject);
            t.name[id] = name_from(e, id);
        } else if (kind_of(e) == kind::spawn) {
            const std::uint64_t id = t.name.size();
            live_id[e.subject] = id;
            t.name.push_back(flag_of(e) ? name_from(e, id) : "thread " + std::to_string(id));
            t.id_of[i] = id;
        } else if (kind_of(e) == kind::run || kind_of(e) == kind::unpark ||
                   kind_of(e) == kind::steal) {
            t.id_of[i] = id_for(e.subject);
        }
    }
    return t;
}

// Step 4. Flow arrows: each wake (an unpark, a spawn, an idle-group wake)
// pairs with its subject's next arrival (a run slice's start, the end of
// an OS thread's park or idle sleep). Only paired wakes get arrows, so
// every 's' in the file has its 'f'. Returns each event's flow id (0:
// none; both ends of an arrow carry the same id).
std::vector<std::uint64_t> pair_wakes(const std::vector<item>& all) {
    struct point {
        std::uint64_t t;
        bool departure;
        std::size_t index;
    };
    std::vector<point> points;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const event& e = all[i].e;
        switch (kind_of(e)) {
        case kind::spawn:
        case kind::unpark: points.push_back({e.t0, true, i}); break;
        case kind::run: points.push_back({e.t0, false, i}); break;
        case kind::os_park:
        case kind::idle: points.push_back({e.t1, false, i}); break;
        default: break;
        }
    }
    std::stable_sort(points.begin(), points.end(), [](const point& x, const point& y) {
        return x.t < y.t || (x.t == y.t && x.departure && !y.departure);
    });
    std::unordered_map<std::uint64_t, std::size_t> pending;  // subject -> departure
    std::vector<std::uint64_t> flow_of(all.size(), 0);
    std::uint64_t flows = 0;
    for (const point& p : points) {
        const std::uint64_t subject = all[p.index].e.subject;
        if (p.departure) {
            pending[subject] = p.index;
        } else if (auto it = pending.find(subject); it != pending.end()) {
            flow_of[it->second] = flow_of[p.index] = ++flows;
            pending.erase(it);
        }
    }
    return flow_of;
}

// Step 5. The JSON output: the header, the thread names, then one object
// per event.
struct json_out {
    std::FILE* out;
    long pid;
    std::uint64_t origin;  // the first event's time: ts 0
    const std::vector<item>& all;
    const thread_lives& threads;
    const std::vector<std::uint64_t>& flow_of;

    double us(std::uint64_t t) const noexcept { return static_cast<double>(t - origin) / 1000.0; }
    std::string thread_name(std::size_t i) const {
        return json_escape(threads.name[threads.id_of[i]].c_str());
    }

    void header(std::uint64_t dropped, std::uint64_t lost, const char* ended_by,
                const std::vector<std::pair<long, std::string>>& names) const {
        std::fprintf(out,
                     "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"troupe\","
                     "\"dropped_events\":%" PRIu64 ",\"lost_threads\":%" PRIu64
                     ",\"buffer_events\":%zu,\"ended_by\":\"%s\"},\n\"traceEvents\":[\n",
                     dropped, lost, capacity, ended_by ? json_escape(ended_by).c_str() : "exit");
        std::fprintf(out,
                     "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,\"args\":{\"name\":"
                     "\"troupe\"}}",
                     pid);
        for (const auto& [tid, label] : names)
            std::fprintf(out,
                         ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,"
                         "\"args\":{\"name\":\"%s\"}}",
                         pid, tid, json_escape(label.c_str()).c_str());
    }

    // One end of a flow arrow ("s" starts it, "f" ends it).
    void flow(const char* ph, std::uint64_t id, double ts, long tid) const {
        std::fprintf(out,
                     ",\n{\"name\":\"wake\",\"cat\":\"wake\",\"ph\":\"%s\",%s\"id\":%" PRIu64
                     ",\"ts\":%.3f,\"pid\":%ld,\"tid\":%ld}",
                     ph, ph[0] == 'f' ? "\"bp\":\"e\"," : "", id, ts, pid, tid);
    }

    void run(std::size_t i, double ts, double dur) const {
        const event& e = all[i].e;
        const long tid = all[i].tid;
        const char* why = reinterpret_cast<const char*>(e.a);
        std::fprintf(out,
                     ",\n{\"name\":\"%s\",\"cat\":\"run\",\"ph\":\"X\",\"ts\":%.3f,"
                     "\"dur\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{\"thread\":%" PRIu64
                     ",\"end\":\"%s\"%s%s%s}}",
                     thread_name(i).c_str(), ts, dur, pid, tid, threads.id_of[i],
                     end_name(flag_of(e)), why ? ",\"reason\":\"" : "",
                     why ? json_escape(why).c_str() : "", why ? "\"" : "");
        if (flow_of[i]) flow("f", flow_of[i], ts, tid);
    }

    // A spawn or an unpark: the waker's side of a wake.
    void wake(std::size_t i, double ts, double dur) const {
        const event& e = all[i].e;
        const long tid = all[i].tid;
        const bool spawned = kind_of(e) == kind::spawn;
        const bool fiber = spawned || static_cast<placed>(flag_of(e)) == placed::handoff ||
                           static_cast<placed>(flag_of(e)) == placed::queued;
        const std::string whom = fiber ? thread_name(i) : std::string("OS thread");
        std::fprintf(out,
                     ",\n{\"name\":\"%s %s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,"
                     "\"dur\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{\"how\":\"%s\"",
                     spawned ? "spawn" : "unpark", whom.c_str(), spawned ? "spawn" : "unpark", ts,
                     dur, pid, tid, spawned ? "new thread" : placed_name(flag_of(e)));
        if (fiber) std::fprintf(out, ",\"thread\":%" PRIu64, threads.id_of[i]);
        std::fprintf(out, "}}");
        if (flow_of[i]) flow("s", flow_of[i], ts, tid);
    }

    void steal(std::size_t i, double ts) const {
        const event& e = all[i].e;
        std::fprintf(out,
                     ",\n{\"name\":\"steal\",\"cat\":\"steal\",\"ph\":\"i\",\"s\":\"t\","
                     "\"ts\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{\"thread\":\"%s\","
                     "\"from processor\":%u,\"slot\":\"%s\"}}",
                     ts, pid, all[i].tid, thread_name(i).c_str(), aux_of(e),
                     flag_of(e) ? "hand-off" : "queue");
    }

    // An OS thread's park or an idle member's sleep.
    void sleep(std::size_t i, double ts, double dur) const {
        const event& e = all[i].e;
        const long tid = all[i].tid;
        const bool parked = kind_of(e) == kind::os_park;
        const char* why = reinterpret_cast<const char*>(e.a);
        std::fprintf(out,
                     ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,"
                     "\"dur\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{\"reason\":\"%s\"}}",
                     parked ? "parked" : "idle", parked ? "park" : "idle", ts, dur, pid, tid,
                     parked ? (why ? json_escape(why).c_str() : "park") : "idle");
        // The arrow ends where the sleep ends (a wake has no slice after it
        // on an OS thread's track).
        if (flow_of[i]) flow("f", flow_of[i], ts + dur, tid);
    }

    // One big actor batch (its mailbox), or a run of small ones.
    void batch(std::size_t i, double ts, double dur) const {
        const event& e = all[i].e;
        const long tid = all[i].tid;
        char where[48];
        if (e.a == ~std::uint64_t{0}) where[0] = '\0';
        else std::snprintf(where, sizeof where, ",\"mailbox\":%" PRIu64, e.a);
        const char* name = e.b == 1 ? "actor batch" : "actor batches";
        if (flag_of(e))
            std::fprintf(out,
                         ",\n{\"name\":\"%s\",\"cat\":\"actor\",\"ph\":\"i\","
                         "\"s\":\"t\",\"ts\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{"
                         "\"batches\":%" PRIu64 ",\"messages\":%u%s}}",
                         name, ts, pid, tid, e.b, aux_of(e), where);
        else
            std::fprintf(out,
                         ",\n{\"name\":\"%s\",\"cat\":\"actor\",\"ph\":\"X\","
                         "\"ts\":%.3f,\"dur\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{"
                         "\"batches\":%" PRIu64 ",\"messages\":%u%s}}",
                         name, ts, dur, pid, tid, e.b, aux_of(e), where);
    }

    // An I/O wait: an async slice (its own row in the viewer, beside the
    // processors' run slices it spans) named by operation and descriptor.
    void io_wait(std::size_t i, double ts, double dur) const {
        const event& e = all[i].e;
        const char* op = reinterpret_cast<const char*>(e.a);
        const std::string op_name = json_escape(op ? op : "io");
        const int fd = static_cast<int>(aux_of(e));
        for (const char* ph : {"b", "e"})
            std::fprintf(out,
                         ",\n{\"name\":\"io %s fd %d\",\"cat\":\"io\",\"ph\":\"%s\",\"id\":%zu,"
                         "\"ts\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{\"fd\":%d,\"op\":\"%s\","
                         "\"bytes\":%" PRIu64 "}}",
                         op_name.c_str(), fd, ph, i, ph[0] == 'b' ? ts : ts + dur, pid, all[i].tid,
                         fd, op_name.c_str(), e.b);
    }

    void mailbox_steal(std::size_t i, double ts) const {
        const event& e = all[i].e;
        std::fprintf(out,
                     ",\n{\"name\":\"steal mailbox\",\"cat\":\"actor\",\"ph\":\"i\","
                     "\"s\":\"t\",\"ts\":%.3f,\"pid\":%ld,\"tid\":%ld,\"args\":{"
                     "\"mailbox\":%" PRIu64 ",\"from worker\":%u}}",
                     ts, pid, all[i].tid, e.a, aux_of(e));
    }

    void events() const {
        for (std::size_t i = 0; i < all.size(); ++i) {
            const event& e = all[i].e;
            const double ts = us(e.t0);
            const double dur = us(e.t1) - ts;
            switch (kind_of(e)) {
            case kind::run: run(i, ts, dur); break;
            case kind::spawn:
            case kind::unpark: wake(i, ts, dur); break;
            case kind::steal: steal(i, ts); break;
            case kind::os_park:
            case kind::idle: sleep(i, ts, dur); break;
            case kind::batch: batch(i, ts, dur); break;
            case kind::rename: break;  // applied to the thread's name (step 3)
            case kind::mailbox_steal: mailbox_steal(i, ts); break;
            case kind::io_wait: io_wait(i, ts, dur); break;
            }
        }
        std::fprintf(out, "\n]}\n");
    }
};

}  // namespace

bool write(const char* path, const char* ended_by) noexcept {
    if (writing.exchange(true, std::memory_order_acq_rel)) return false;  // one at a time
    struct done {
        ~done() {
            written.store(true, std::memory_order_release);
            writing.store(false, std::memory_order_release);
        }
    } release_writer;
    // Stop first: a thread still appending finishes its event, and the
    // collection below drops whatever it overwrote meanwhile.
    recording.store(false, std::memory_order_seq_cst);
    try {
        std::uint64_t dropped = 0;
        std::vector<std::pair<long, std::string>> names;
        std::vector<item> all = collect(dropped, names);
        ticks_to_ns(all);
        std::stable_sort(all.begin(), all.end(),
                         [](const item& x, const item& y) { return x.e.t0 < y.e.t0; });
        const thread_lives threads = number_threads(all);
        const std::vector<std::uint64_t> flow_of = pair_wakes(all);

        std::FILE* out = std::fopen(path, "w");
        if (!out) {
            std::fprintf(stderr, "troupe: cannot write the trace to %s: %s\n", path,
                         std::strerror(errno));
            return false;
        }
        const std::uint64_t lost = lost_threads.load(std::memory_order_relaxed);
        if (dropped || lost)
            std::fprintf(stderr,
                         "troupe: trace %s: %" PRIu64
                         " event(s) dropped (each kernel thread keeps its last %zu; raise "
                         "TROUPE_TRACE_EVENTS), %" PRIu64 " thread(s) not recorded\n",
                         path, dropped, capacity, lost);
        const json_out json{
            out,    static_cast<long>(::getpid()), all.empty() ? 0 : all.front().e.t0, all, threads,
            flow_of};
        json.header(dropped, lost, ended_by, names);
        json.events();
        const bool ok = std::fflush(out) == 0 && !std::ferror(out);
        if (std::fclose(out) != 0 || !ok) {
            std::fprintf(stderr, "troupe: writing the trace to %s failed\n", path);
            return false;
        }
        return true;
    } catch (...) {
        std::fprintf(stderr, "troupe: out of memory writing the trace to %s\n", path);
        return false;
    }
}

}  // namespace troupe::detail::trace
