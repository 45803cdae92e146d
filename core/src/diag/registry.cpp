// The registry of clusters, user threads and waiting OS threads, thread
// names, and the wait-for graph's edges (registry.hpp).
#include "diag/registry.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <thread>

#include "troupe/detail/trace.hpp"
#include "troupe/detail/wake_guard.hpp"
#include "troupe/thread.hpp"

namespace troupe::detail {

void context_list::push(context& c) noexcept {
    context_access::prev(c) = nullptr;
    context_access::next(c) = head;
    if (head) context_access::prev(*head) = &c;
    head = &c;
    ++size;
}

void context_list::erase(context& c) noexcept {
    context* p = context_access::prev(c);
    context* n = context_access::next(c);
    if (p) context_access::next(*p) = n;
    else head = n;
    if (n) context_access::prev(*n) = p;
    context_access::prev(c) = context_access::next(c) = nullptr;
    --size;
}

registry& the_registry() noexcept {
    // Never destroyed: OS threads unlink themselves at exit, possibly after
    // static destructors ran.
    static registry* r = new registry;
    return *r;
}

void wait_out_readers(wait_reason& r) noexcept {
    // acquire: pairs with each wait_pin's release decrement, so the
    // readers' reads of the resource happen before our caller frees it.
    // A pin is held only across a describer call, which never blocks, and
    // its reader runs on another kernel thread (a describer has no switch
    // point), so yielding the kernel thread lets it finish.
    while (r.readers.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

std::int64_t wait_clock_ns() noexcept {
    // The coarse clock is a vDSO read of the last tick: a few nanoseconds,
    // against twenty or more for CLOCK_MONOTONIC (rule 10: the record must
    // cost nothing measurable on a wait that parks).
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {
// Unlinks the calling OS thread's context when the thread exits. A separate
// thread_local, touched only when the thread first waits, so the context
// itself keeps a trivial destructor (no TLS guard on this_context()).
struct os_unlinker {
    context* c = nullptr;
    ~os_unlinker() {
        if (!c) return;
        // The context's storage ends with the thread: a waker that
        // announced it (detail/wake_guard.hpp) finishes its unpark first.
        wait_out_wakers(*c);
        registry& r = the_registry();
        std::lock_guard g{r.lock};
        r.os_threads.erase(*c);
    }
};
thread_local os_unlinker tls_unlinker;

[[gnu::cold, gnu::noinline]] void register_os_thread(context& c) noexcept {
    watch_init_once();  // a program whose OS threads wait before any cluster exists
    auto& os = static_cast<os_context&>(c);
    os.tid = static_cast<long>(::syscall(SYS_gettid));
    registry& r = the_registry();
    std::lock_guard g{r.lock};
    // The id under the registry's lock: a dump may name this thread (as a
    // lock's owner) before it is registered, reading its id under the lock.
    context_access::set_id(c, r.next_id.fetch_add(1, std::memory_order_relaxed));
    r.os_threads.push(c);
    tls_unlinker.c = &c;
}
}  // namespace

wait_reason& begin_wait_record() noexcept {
    context& c = this_context();
    // User threads are registered when they start; an OS thread the first
    // time it waits.
    if (context_access::id(c) == 0) [[unlikely]]
        register_os_thread(c);
    return context_access::wait(c);
}

const wait_reason& wait_record_of(const context& c) noexcept { return context_access::wait(c); }

void register_fiber(fiber& f) noexcept {
    registry& r = the_registry();
    context_access::set_id(f, r.next_id.fetch_add(1, std::memory_order_relaxed));
    context_access::name(f).store(f.name, std::memory_order_relaxed);
    std::lock_guard g{r.lock};
    r.fibers.push(f);
}

void unregister_fiber(fiber& f) noexcept {
    registry& r = the_registry();
    std::lock_guard g{r.lock};
    r.fibers.erase(f);
}

void register_cluster(cluster_impl& c) {
    registry& r = the_registry();
    std::lock_guard g{r.lock};
    if (r.cluster_count < registry::max_clusters) r.clusters[r.cluster_count++] = &c;
}

void unregister_cluster(cluster_impl& c) noexcept {
    registry& r = the_registry();
    std::lock_guard g{r.lock};
    auto end = std::remove(r.clusters, r.clusters + r.cluster_count, &c);
    r.cluster_count = static_cast<std::size_t>(end - r.clusters);
}

void add_dump_section(dump_section& s) noexcept {
    registry& r = the_registry();
    std::lock_guard g{r.lock};
    s.prev = nullptr;
    s.next = r.sections;
    if (r.sections) r.sections->prev = &s;
    r.sections = &s;
}

void remove_dump_section(dump_section& s) noexcept {
    registry& r = the_registry();
    std::lock_guard g{r.lock};
    if (!s.prev && r.sections != &s) return;  // not added, or removed already
    if (s.prev) s.prev->next = s.next;
    else r.sections = s.next;
    if (s.next) s.next->prev = s.prev;
    s.prev = s.next = nullptr;
}

std::string describe_context(const context* c) {
    if (!c) return "nobody";
    std::ostringstream os;
    const std::uint64_t id = context_access::id(*c);
    if (c->is_user_thread()) {
        os << "thread " << id;
    } else if (id) {
        os << "OS thread " << id;
    } else {
        // Never waited on a troupe primitive, so not in the registry (a lock
        // owner that has not blocked yet).
        os << "OS thread at " << static_cast<const void*>(c);
        return os.str();
    }
    if (const char* n = context_access::name(*c)) os << " '" << n << "'";
    if (!c->is_user_thread()) os << " (tid " << static_cast<const os_context*>(c)->tid << ")";
    return os.str();
}

namespace {
// One edge of a chain walked by find_cycle_through, with what its
// validation re-reads: the waiter's sequence and the resource's holder.
struct walked_edge {
    const context* from = nullptr;
    std::uint32_t seq = 0;
    const wait_describer* describer = nullptr;
    edge e;
};

// Whether `c` is in the registry (so its memory is alive while the
// registry's lock is held: a user thread leaves it when joined, an OS thread
// when it exits, both under the lock). Linear, but only checked builds walk,
// and only when a lock wait begins behind an owner.
bool registered(const registry& r, const context* c) noexcept {
    for (const context* x = r.fibers.head; x; x = context_access::next(*x))
        if (x == c) return true;
    for (const context* x = r.os_threads.head; x; x = context_access::next(*x))
        if (x == c) return true;
    return false;
}

// Reads `c`'s edge once, consistently (the sequence is odd and the same
// before and after): false if `c` is not waiting, moved on, waits with a
// deadline (it ends by itself: not a deadlock), or waits for nobody.
bool read_edge(const context& c, walked_edge& out) noexcept {
    const wait_reason& r = context_access::wait(c);
    const std::uint32_t s = r.seq.load(std::memory_order_acquire);
    if (!(s & 1)) return false;
    walked_edge w;
    w.from = &c;
    w.seq = s;
    // acquire loads: the sequence's re-read below comes after them.
    w.e.kind = r.kind.load(std::memory_order_acquire);
    w.e.name = r.name.load(std::memory_order_acquire);
    w.e.resource = r.resource.load(std::memory_order_acquire);
    w.describer = r.describer.load(std::memory_order_acquire);
    const std::int64_t until = r.until_ns.load(std::memory_order_acquire);
    if (w.e.kind && w.describer && w.describer->holder && until == 0) {
        const wait_pin pin(r, s);  // the resource is alive only while c waits on it
        if (!pin.held()) return false;
        w.e.to = w.describer->holder(w.e.resource);
        if (w.describer->relation) w.e.relation = w.describer->relation;
    }
    if (r.seq.load(std::memory_order_acquire) != s) return false;
    if (!w.e.kind || !w.e.to) return false;
    out = w;
    return true;
}
}  // namespace

bool confirm_cycle(const read_edge_record* edges, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const read_edge_record& e = edges[i];
        // A self-edge: the resource was handed to its waiter, which has
        // not left its wait record yet (or a joined thread is the joiner:
        // refused by join). Either way nobody waits for anybody.
        if (!e.describer || !e.describer->holder || e.to == e.from) return false;
        if (edges[(i + 1) % n].from != e.to) return false;
    }
    // Every holder first, then every sequence (see registry.hpp).
    for (std::size_t i = 0; i < n; ++i) {
        const wait_pin pin(context_access::wait(*edges[i].from), edges[i].seq);
        if (!pin.held() || edges[i].describer->holder(edges[i].resource) != edges[i].to)
            return false;
    }
    for (std::size_t i = 0; i < n; ++i)
        if (context_access::wait(*edges[i].from).seq.load(std::memory_order_acquire) !=
            edges[i].seq)
            return false;
    return true;
}

std::string find_cycle_through(const context& me) {
    registry& r = the_registry();
    constexpr std::size_t max_edges = 32;  // bounded: a longer cycle is left to the dump
    walked_edge chain[max_edges];
    std::size_t n = 0;
    std::lock_guard g{r.lock};
    // Pass 1: follow the edges from `me`, dereferencing only registered
    // contexts (an owner read from a lock word may have released the lock
    // and exited since). `me` is registered: its record was just written.
    const context* c = &me;
    for (;;) {
        if (n == max_edges) return {};
        if (c != &me && !registered(r, c)) return {};
        if (!read_edge(*c, chain[n])) return {};
        c = chain[n++].e.to;
        if (c == &me) break;
        for (std::size_t i = 1; i < n; ++i)
            if (chain[i].from == c) return {};  // a cycle that does not pass through us
    }
    // Pass 2: each edge was read at a different moment, so re-read them
    // (confirm_cycle): no stale edge is reported. (Our own edges are stable
    // anyway: we hold our locks and are about to park.)
    read_edge_record recs[max_edges];
    for (std::size_t i = 0; i < n; ++i)
        recs[i] = {chain[i].from, chain[i].seq, chain[i].describer, chain[i].e.resource,
                   chain[i].e.to};
    if (!confirm_cycle(recs, n)) return {};
    // The dump's wording (dump.cpp, find_cycles), starting from us.
    std::ostringstream os;
    os << "deadlock: " << describe_context(&me) << " waits for ";
    for (std::size_t i = 0; i < n; ++i) {
        const edge& e = chain[i].e;
        if (i) os << ", which waits for ";
        os << e.kind;
        if (e.name) os << " '" << e.name << "'";
        os << " (" << e.resource << ") " << e.relation << " " << describe_context(e.to);
    }
    return os.str();
}

}  // namespace troupe::detail

namespace troupe::this_thread {

void set_name(const char* name) noexcept {
    context& c = this_context();
    detail::context_access::name(c).store(name, std::memory_order_relaxed);
    // An OS thread joins the registry now, so dumps show it by name.
    if (detail::context_access::id(c) == 0) (void)detail::begin_wait_record();
    if (detail::trace::on()) [[unlikely]] {
        if (c.is_user_thread()) detail::trace::rename(static_cast<detail::fiber*>(&c), name);
        else detail::trace::name_os_thread(name);
    }
}

}  // namespace troupe::this_thread

// ------------------------------------------------------------ debuggers

// What scripts/troupe-gdb.py needs to walk the registry without debug
// information: the registry's address and the offsets of the fields it
// reads, filled in when the library is loaded. Version 1.
namespace {
template <class T, class M>
std::uint32_t offset_in(const T& obj, const M& member) noexcept {
    return static_cast<std::uint32_t>(reinterpret_cast<const char*>(&member) -
                                      reinterpret_cast<const char*>(&obj));
}
}  // namespace

namespace troupe::detail {
struct debug_layout {
    std::uint32_t version = 1;
    std::uint32_t fibers_head, os_threads_head;    // in registry
    std::uint32_t reg_next, id, name, state;       // in context
    std::uint32_t seq, kind, wait_name, resource;  // in context (its wait record)
    std::uint32_t fctx, joiner, home, tid;         // in fiber, fiber, fiber, os_context
    std::uint32_t parked_value;
    registry* reg;
};

struct debug_layout_access {
    static debug_layout make() noexcept {
        debug_layout l;
        registry& r = the_registry();
        l.fibers_head = offset_in(r, r.fibers.head);
        l.os_threads_head = offset_in(r, r.os_threads.head);
        static fiber f;  // a probe, never run
        const context& c = f;
        l.reg_next = offset_in(f, c.reg_next_);
        l.id = offset_in(f, c.id_);
        l.name = offset_in(f, c.name_);
        l.state = offset_in(f, c.state_);
        l.seq = offset_in(f, c.wait_.seq);
        l.kind = offset_in(f, c.wait_.kind);
        l.wait_name = offset_in(f, c.wait_.name);
        l.resource = offset_in(f, c.wait_.resource);
        l.fctx = offset_in(f, f.fctx);
        l.joiner = offset_in(f, f.joiner);
        l.home = offset_in(f, f.home);
        static os_context o;
        l.tid = offset_in(o, o.tid);
        l.parked_value = context::parked;
        l.reg = &r;
        return l;
    }
};
}  // namespace troupe::detail

extern "C" {
// Read by scripts/troupe-gdb.py; `used` keeps it in static links.
[[gnu::used, gnu::visibility("default")]] troupe::detail::debug_layout troupe_debug_layout =
    troupe::detail::debug_layout_access::make();
}
