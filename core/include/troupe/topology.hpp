#pragma once
/// The machine's layout: hardware threads, how far apart two of them are,
/// grouping by distance, and binding a kernel thread to one.
///
///     troupe::topology t;                              // this machine
///     troupe::topology s{"pack:2 numa:2 core:4 pu:2"};  // synthetic, for tests
///     auto d = s.distance_between(0, 9);               // distance::same_package
///
/// hwloc is optional (`-Dtopology=auto|enabled|disabled`; `topology_has_hwloc`
/// says which this build is). With hwloc, hardware threads are numbered by
/// hwloc's logical PU index (0..pu_count-1). Without it, this machine is the
/// flat topology (`topology::flat()`): one package and one NUMA node, one
/// core per hardware thread the affinity mask allowed when it was built,
/// numbered in ascending OS CPU order; synthetic descriptions then throw.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/config.hpp"

namespace troupe {

/// Whether this build of troupe reads the machine through hwloc (and so
/// knows SMT siblings, caches, NUMA nodes, and synthetic descriptions).
#if defined(TROUPE_HAS_HWLOC)
inline constexpr bool topology_has_hwloc = true;
#else
inline constexpr bool topology_has_hwloc = false;
#endif

/// How far apart two hardware threads are, nearest first.
enum class distance : unsigned char {
    same_pu,       ///< the same hardware thread
    same_core,     ///< SMT siblings
    shared_l2,     ///< different cores sharing an L1/L2 cache
    shared_l3,     ///< sharing an L3 cache or the same NUMA node
    same_package,  ///< same socket/package, further apart
    machine,       ///< different packages
};

/// A printable name for `d`.
const char* to_string(distance d) noexcept;

class topology {
public:
    /// Loads this machine's topology (through hwloc if the build has it,
    /// else the flat topology). Throws std::runtime_error if hwloc fails,
    /// std::bad_alloc.
    topology();
    /// Builds a synthetic topology from an hwloc description such as
    /// "pack:2 numa:2 core:4 pu:2". Throws std::invalid_argument if hwloc
    /// rejects it, or if this build has no hwloc.
    explicit topology(std::string_view synthetic);
    /// This machine as a flat topology, in every build: one package, one
    /// NUMA node, one core per hardware thread the calling thread's
    /// affinity mask allows (PU i is the i-th allowed OS CPU). Throws
    /// std::bad_alloc only.
    static topology flat();
    ~topology();
    topology(topology&& o) noexcept;
    topology& operator=(topology&&) = delete;
    topology(const topology&) = delete;

    /// Hardware threads (PUs).
    std::size_t pu_count() const noexcept;
    /// Cores.
    std::size_t core_count() const noexcept;
    /// NUMA nodes (at least 1).
    std::size_t numa_count() const noexcept;

    /// The distance class between PUs `a` and `b`. Throws std::out_of_range.
    distance distance_between(std::size_t a, std::size_t b) const;

    /// Groups workers by their distance from worker `from`. `worker_pu[i]` is
    /// the PU worker i runs on. Returns the other workers' indices, one group
    /// per distance class present, nearest group first; within a group,
    /// ascending index. Throws std::out_of_range for a bad index or PU.
    std::vector<std::vector<std::size_t>> group_by_distance(
        std::size_t from, std::span<const std::size_t> worker_pu) const;

    /// Binds the calling kernel thread to PU `pu`. Returns false if the
    /// system refused (or this is a synthetic topology); throws
    /// std::out_of_range for a bad index.
    bool bind_current_thread(std::size_t pu) const;

    /// Whether this topology describes the running machine.
    bool is_this_system() const noexcept;

private:
    struct impl;
    explicit topology(impl* i) noexcept;
    impl* impl_;
};

/// How many processors (or actor workers) a program that configures
/// nothing gets: the environment variable TROUPE_PROCESSORS if it holds a
/// positive number; otherwise the hardware threads the process's affinity
/// mask allows, lowered to the cgroup CPU quota (cgroup v2 `cpu.max` or v1
/// `cpu.cfs_quota_us`/`cpu.cfs_period_us`, the smallest along the cgroup's
/// ancestry) rounded up, but not below 2 unless the mask allows only one
/// (as Go 1.25 sets GOMAXPROCS). The one CPU count used by clusters and
/// actor systems. Reads the environment and /proc, /sys on every call (not
/// a hot path). Never throws; at least 1.
std::size_t available_concurrency() noexcept;

/// Hardware threads the calling thread's affinity mask allows (at least 1).
std::size_t affinity_cpu_count() noexcept;

namespace detail {
/// The cgroup CPU limit in CPUs (quota / period) of the cgroup described by
/// `proc_self_cgroup` (the text of /proc/self/cgroup), looking for the
/// controller files under `cgroup_root` (normally "/sys/fs/cgroup"); the
/// smallest limit along the path to the root; nullopt if unlimited or
/// unknown. Exposed for tests.
std::optional<double> cgroup_cpu_limit(std::string_view proc_self_cgroup,
                                       const std::string& cgroup_root) noexcept;
}  // namespace detail

}  // namespace troupe
