#pragma once
/// Processor pools: kernel threads that run user threads (M:N).
///
///     troupe::cluster pool{4};                 // an independent pool
///     troupe::thread t{pool, [] { work(); }};  // runs on one of its 4 processors
///
///     troupe::processors p{2};                 // default pool: exactly 2 while p lives
///
/// Each processor has its own ready queue; idle processors steal from the
/// others, spin briefly (adaptive, bounded by cluster_options::idle_spin),
/// then sleep on a futex (an idle pool uses no CPU). A thread unparked by a
/// user thread of the same cluster runs next on the waker's processor (an
/// idle processor may steal it after cluster_options::handoff_grace); a
/// thread unparked from outside goes back to the processor it last ran on;
/// new threads join the creator's queue and spread by stealing. Whenever
/// work becomes ready while a processor sleeps and none spins, one is woken.
/// See docs/scheduler.md. Pools are independent: several may live in one
/// process and be created and destroyed repeatedly. Programs that configure
/// nothing use the default cluster, started on first use with
/// available_concurrency() processors (affinity mask, cgroup quota, or the
/// environment variable TROUPE_PROCESSORS).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace troupe {

namespace detail {
class cluster_impl;
}

/// How a cluster is built. Every field has a working default.
struct cluster_options {
    /// Processors to start; 0 means available_concurrency().
    std::size_t processors = 0;
    /// Bind processor i to hardware thread i (mod the count) through hwloc.
    bool pin = false;
    /// A name used in error messages and statistics.
    const char* name = nullptr;
    /// Longest time an idle processor spins looking for work before it
    /// sleeps; adaptive below it (spinning that finds nothing shrinks). Zero:
    /// never spin. Negative: defaults::core::idle_spin, or TROUPE_IDLE_SPIN_US.
    std::chrono::nanoseconds idle_spin{-1};
    /// How long a thread woken by a user thread of this cluster is reserved
    /// for the waker's processor before an idle processor may steal it.
    /// Negative: defaults::core::handoff_grace, or TROUPE_HANDOFF_GRACE_US.
    std::chrono::nanoseconds handoff_grace{-1};
    /// How long a processor whose slot an OS thread holds between its waits
    /// (lend_while_blocked) sleeps before it looks at its queue, doubling up
    /// to 16 times this while nothing waits there. Work that waited a whole
    /// look while the OS thread did not run the slot makes the processor take
    /// its slot back. Zero: never look (such work waits for the OS thread's
    /// next wait, another processor's steal, or the guard's end). Negative:
    /// defaults::core::held_slot_look.
    std::chrono::nanoseconds held_slot_look{-1};
};

/// Counters aggregated over a cluster's processors. All zero unless the
/// build has `-Dstatistics=true`.
struct cluster_statistics {
    std::uint64_t threads_created = 0;
    std::uint64_t context_switches = 0;
    std::uint64_t steals = 0;
    std::uint64_t sleeps = 0;
    /// Threads woken by a thread of the cluster and placed to run next on
    /// the waker's processor.
    std::uint64_t handoffs = 0;
};

class cluster {
public:
    /// Starts `processors` kernel threads (0: available_concurrency()).
    explicit cluster(std::size_t processors = 0);
    explicit cluster(const cluster_options& options);
    cluster(const cluster&) = delete;
    cluster& operator=(const cluster&) = delete;

    /// Blocks until every user thread started on this cluster has finished,
    /// then stops its processors. (Threads are normally joined by their
    /// handles before this; checked builds report a handle left unjoined.)
    ~cluster();

    /// Current number of processors.
    std::size_t processor_count() const noexcept;

    /// Adds processors or retires the surplus (at least one stays). Threads
    /// queued on a retiring processor move to the others. Blocks until the
    /// retired kernel threads have exited. May be called from any context,
    /// including a user thread of this cluster: if that thread runs on a
    /// processor being retired, it first moves to a processor that stays
    /// (the retiring processor hands it over when it yields) and only then
    /// waits for the retired kernel threads, never for its own. Concurrent
    /// calls are serialised. Throws std::invalid_argument above 256 and
    /// std::system_error if a kernel thread cannot be started (basic
    /// guarantee: the processors started so far stay).
    void set_processor_count(std::size_t n);

    /// User threads started on this cluster and not yet finished.
    std::size_t live_threads() const noexcept;

    /// Aggregated counters (see cluster_statistics). Safe to call at any
    /// time, also while set_processor_count runs (no lock). nothrow.
    cluster_statistics statistics() const noexcept;

    detail::cluster_impl& impl() noexcept { return *impl_; }

private:
    std::unique_ptr<detail::cluster_impl> impl_;
};

/// The default cluster, started on first use.
cluster& default_cluster();

/// The cluster the calling user thread runs on, or the default cluster when
/// called from an OS thread.
cluster& this_cluster();

/// RAII, opt-in: while alive, the calling OS thread lends its kernel thread
/// to `c` whenever it blocks on a troupe primitive (a channel, a lock, a
/// future, a join...), as Go's `main` is a goroutine holding one of the
/// GOMAXPROCS Ps. If a processor of `c` sleeps, the blocked thread takes
/// that processor's *slot* (its ready queue and hand-off slot; the
/// processor's own kernel thread stays asleep) and runs `c`'s ready user
/// threads there until its own wait is over; if every processor is awake it
/// waits as any OS thread. So `c`'s work never runs on more kernel threads
/// than `c` has processors, and a producer it runs hands it its element
/// with a banked permit instead of a futex wake.
///
/// What the caller gets, and pays:
/// - its wait ends only when the user thread it is running parks, yields or
///   finishes (no preemption): a blocking call may return up to one user
///   thread's run later than without lending;
/// - it keeps the slot between its waits while the scope lives (Go's main
///   goroutine keeps its P), and threads it makes ready meanwhile join that
///   slot's queue: threads made ready on that slot meanwhile run
///   at its next wait, or are stolen by another processor of `c` that goes
///   idle, or go back to the processor when the scope ends or when they
///   have waited a whole cluster_options::held_slot_look (1-16 ms) without
///   this thread running the slot (the processor then takes it back);
/// - with no work in the slot it spins there up to its park spin limit
///   (set_park_spin_policy's max_spins), then gives the slot back and
///   sleeps as usual.
/// Must be created and destroyed on the same OS thread (on a user thread it
/// does nothing) and destroyed before `c`. Nests (the innermost wins; a
/// slot held for an outer scope's cluster is given back before a wait for
/// another). nothrow.
class lend_while_blocked {
public:
    explicit lend_while_blocked(cluster& c) noexcept;
    ~lend_while_blocked();
    lend_while_blocked(const lend_while_blocked&) = delete;
    lend_while_blocked& operator=(const lend_while_blocked&) = delete;

private:
    detail::cluster_impl* previous_;
};

/// RAII: sets the default cluster's processor count to `n` while alive and
/// restores the previous count at destruction (like Cforall's
/// `processor p[n]`, but naming the total rather than an increment).
class processors {
public:
    explicit processors(std::size_t n);
    ~processors();
    processors(const processors&) = delete;
    processors& operator=(const processors&) = delete;

private:
    std::size_t previous_;
};

}  // namespace troupe
