#pragma once
/// Processor pools: kernel threads that run user threads (M:N).
///
///     troupe::cluster pool{4};                 // an independent pool
///     troupe::thread t{pool, [] { work(); }};  // runs on one of its 4 processors
///
///     troupe::processors p{2};                 // default pool: exactly 2 while p lives
///
/// Each processor has its own ready queue; idle processors steal from the
/// others, spin briefly, then sleep on a futex (an idle pool uses no CPU). A
/// thread that is unparked goes back to the processor it last ran on. Pools
/// are independent: several may live in one process and be created and
/// destroyed repeatedly. Programs that configure nothing use the default
/// cluster, started on first use with one processor per hardware thread
/// (environment variable TROUPE_PROCESSORS overrides the count).
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
    /// Processors to start; 0 means one per hardware thread.
    std::size_t processors = 0;
    /// Bind processor i to hardware thread i (mod the count) through hwloc.
    bool pin = false;
    /// A name used in error messages and statistics.
    const char* name = nullptr;
    /// Longest time an idle processor spins looking for work before it
    /// sleeps; adaptive below it (spinning that finds nothing shrinks). Zero:
    /// never spin. Negative: defaults::idle_spin, or TROUPE_IDLE_SPIN_US.
    std::chrono::nanoseconds idle_spin{-1};
    /// How long a thread woken by a user thread of this cluster is reserved
    /// for the waker's processor before an idle processor may steal it.
    /// Negative: defaults::handoff_grace, or TROUPE_HANDOFF_GRACE_US.
    std::chrono::nanoseconds handoff_grace{-1};
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
    /// Starts `processors` kernel threads (0: one per hardware thread).
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
    /// retired kernel threads have exited; must not be called from a user
    /// thread of this cluster when shrinking it.
    void set_processor_count(std::size_t n);

    /// User threads started on this cluster and not yet finished.
    std::size_t live_threads() const noexcept;

    /// Aggregated counters (see cluster_statistics).
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
