#pragma once
// Internal: the runtime's registry of clusters, user threads and OS threads
// that have waited on a troupe primitive (docs/core.md, "Registry"). The
// dump, the deadlock-cycle walk, the everyone-asleep check and the gdb
// script (scripts/troupe-gdb.py reads `troupe::detail::the_registry`) all
// read it.
//
// Cost: a user thread is linked in when it starts and unlinked when it is
// joined (one uncontended mutex each); an OS thread is linked in the first
// time it waits (its TLS exit handler unlinks it). Nothing on a fast path.
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

#include "sched/runtime.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/dump_section.hpp"
#include "troupe/detail/wait_reason.hpp"

namespace troupe::detail {

// The registry's access to context's private fields.
struct context_access {
    static wait_reason& wait(context& c) noexcept { return c.wait_; }
    static const wait_reason& wait(const context& c) noexcept { return c.wait_; }
    static std::uint64_t id(const context& c) noexcept { return c.id_; }
    static void set_id(context& c, std::uint64_t id) noexcept { c.id_ = id; }
    static std::atomic<const char*>& name(context& c) noexcept { return c.name_; }
    static const char* name(const context& c) noexcept {
        return c.name_.load(std::memory_order_relaxed);
    }
    static context*& prev(context& c) noexcept { return c.reg_prev_; }
    static context*& next(context& c) noexcept { return c.reg_next_; }
    static context* next(const context& c) noexcept { return c.reg_next_; }
    static void*& fork_join(context& c) noexcept { return c.fork_join_; }
    static bool parked(const context& c) noexcept {
        return c.state_.load(std::memory_order_acquire) == context::parked;
    }
};

// A doubly linked list of contexts through reg_prev_/reg_next_.
struct context_list {
    context* head = nullptr;
    std::size_t size = 0;
    void push(context& c) noexcept;
    void erase(context& c) noexcept;
};

struct registry {
    std::mutex lock;  // guards every list below
    context_list fibers;
    context_list os_threads;
    // Live clusters (a fixed array: the registry allocates nothing, so the
    // tests' leak check never sees it; clusters beyond it are not listed).
    static constexpr std::size_t max_clusters = 256;
    cluster_impl* clusters[max_clusters] = {};
    std::size_t cluster_count = 0;
    struct span {
        cluster_impl* const* b;
        cluster_impl* const* e;
        cluster_impl* const* begin() const noexcept { return b; }
        cluster_impl* const* end() const noexcept { return e; }
    };
    span cluster_list() const noexcept { return {clusters, clusters + cluster_count}; }
    dump_section* sections = nullptr;
    std::atomic<std::uint64_t> next_id{1};
};

// The process's registry (never destroyed: thread exit handlers and the
// watch thread may use it after main returns).
registry& the_registry() noexcept;

void register_fiber(fiber& f) noexcept;
void unregister_fiber(fiber& f) noexcept;
void register_cluster(cluster_impl& c);
void unregister_cluster(cluster_impl& c) noexcept;

// "thread 7 'name'" or "OS thread 3 'main' (tid 1234)"; an unregistered
// OS thread by address.
std::string describe_context(const context* c);

// An edge of the wait-for graph: what a waiting context waits on and the
// context that must act first (a lock's owner, a joined thread), if any.
struct edge {
    const context* to = nullptr;
    const char* kind = nullptr;  // nullptr: not waiting (or its record moved)
    const char* name = nullptr;
    const void* resource = nullptr;
    const char* relation = "held by";
};

// One edge of a wait-for cycle as it was read (a wait record's sequence,
// its describer and resource, and the holder read through it), for
// confirm_cycle.
struct read_edge_record {
    const context* from = nullptr;
    std::uint32_t seq = 0;
    const wait_describer* describer = nullptr;
    const void* resource = nullptr;
    const context* to = nullptr;
};

// Whether the cycle `edges[0..n)` (each edge's `to` the next one's `from`,
// the last's the first's) existed all at once: re-reads every holder
// through its waiter's pinned record, then every waiter's sequence. Each
// sequence unchanged since it was first read means that thread stayed in
// the same wait throughout; each holder re-read falls inside its holder's
// unbroken wait, during which that holder can neither release the resource
// nor lose it (only an owner releases a lock; a joined thread cannot
// finish while it waits). So, at the instant between the holder re-reads
// and the sequence re-reads, every edge held: a true deadlock. A self-edge
// (a lock handed to its waiter before it left its wait record) is never
// one. Under the registry's lock, for registered contexts only. Nothrow.
bool confirm_cycle(const read_edge_record* edges, std::size_t n) noexcept;

// The wait-for cycle that the wait `me` has just recorded closes, as a
// report in the dump's wording ("deadlock: thread 7 waits for ..."), or
// empty if none. Checked builds call it when a lock wait begins. Takes the
// registry's lock; dereferences only registered contexts; walks at most 32
// edges; reports only a cycle that existed all at once (each edge re-read
// and unchanged: see registry.cpp). May throw std::bad_alloc.
std::string find_cycle_through(const context& me);

// Called where a kernel thread is about to sleep with nothing to do (a
// processor's untimed idle sleep, an OS thread's futex wait in a recorded
// wait): lets the watch thread check whether every thread is asleep.
void note_idle_sleep() noexcept;
// Installs the TROUPE_DUMP_SIGNAL handler and reads TROUPE_DEADLOCK, once
// (with the first cluster).
void watch_init_once() noexcept;
// True while the deadlock handler runs after an everyone-asleep report:
// if it calls exit(), a cluster's destructor does not wait for its threads
// (they are asleep for ever) and leaves its processors as they are.
extern std::atomic<bool> exiting_asleep;
// Counts the watch thread (and the timer thread) as troupe's own.
std::size_t internal_thread_count() noexcept;

}  // namespace troupe::detail
