// topology: hwloc when the build has it (-Dtopology=auto|enabled), and the
// flat topology (one package, one core per hardware thread the affinity
// mask allows) always: topology::flat(), and topology() without hwloc.
#include <pthread.h>
#include <sched.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "troupe/config.hpp"
#include "troupe/topology.hpp"

#if defined(TROUPE_HAS_HWLOC)
#include <hwloc.h>
#endif

namespace troupe {

namespace {

// The OS CPU numbers the calling thread's affinity mask allows, ascending;
// 0..hardware_concurrency-1 if the mask cannot be read.
std::vector<int> allowed_cpus() {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (cpus.empty()) {
        const unsigned n = std::thread::hardware_concurrency();
        for (unsigned c = 0; c < (n ? n : 1); ++c) cpus.push_back(static_cast<int>(c));
    }
    return cpus;
}

[[noreturn]] void no_pu(std::size_t i) {
    throw std::out_of_range("troupe::topology: no hardware thread " + std::to_string(i));
}

}  // namespace

struct topology::impl {
    // Flat topology: PU i is OS CPU cpus[i]; every PU is its own core, all
    // in one package and one NUMA node.
    bool flat = true;
    bool synthetic = false;
    std::vector<int> cpus;
#if defined(TROUPE_HAS_HWLOC)
    hwloc_topology_t topo = nullptr;
    ~impl() {
        if (topo) hwloc_topology_destroy(topo);
    }
    hwloc_obj_t pu(std::size_t i) const {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
        if (!o) no_pu(i);
        return o;
    }
    // How many objects of `type` hwloc reports, or `none` if it reports none.
    std::size_t count(hwloc_obj_type_t type, std::size_t none) const noexcept {
        const int n = hwloc_get_nbobjs_by_type(topo, type);
        return n > 0 ? static_cast<std::size_t>(n) : none;
    }
#endif
    void check_flat_pu(std::size_t i) const {
        if (i >= cpus.size()) no_pu(i);
    }
};

const char* to_string(distance d) noexcept {
    switch (d) {
    case distance::same_pu: return "same_pu";
    case distance::same_core: return "same_core";
    case distance::shared_l2: return "shared_l2";
    case distance::shared_l3: return "shared_l3";
    case distance::same_package: return "same_package";
    case distance::machine: return "machine";
    }
    return "?";
}

topology::topology(impl* i) noexcept : impl_(i) {}

topology topology::flat() {
    auto* i = new impl;
    try {
        i->cpus = allowed_cpus();
    } catch (...) {
        delete i;
        throw;
    }
    return topology(i);
}

#if defined(TROUPE_HAS_HWLOC)

topology::topology() : impl_(new impl) {
    impl_->flat = false;
    if (hwloc_topology_init(&impl_->topo) != 0 || hwloc_topology_load(impl_->topo) != 0) {
        delete impl_;
        throw std::runtime_error("troupe::topology: hwloc could not load this machine's topology");
    }
}

topology::topology(std::string_view synthetic) : impl_(new impl) {
    impl_->flat = false;
    impl_->synthetic = true;
    const std::string desc{synthetic};
    if (hwloc_topology_init(&impl_->topo) != 0 ||
        hwloc_topology_set_synthetic(impl_->topo, desc.c_str()) != 0 ||
        hwloc_topology_load(impl_->topo) != 0) {
        delete impl_;
        throw std::invalid_argument("troupe::topology: hwloc rejected synthetic description '" +
                                    desc + "'");
    }
}

#else  // no hwloc: this machine is the flat topology

topology::topology() : topology(flat()) {}

topology::topology(std::string_view synthetic) : impl_(nullptr) {
    throw std::invalid_argument("troupe::topology: synthetic description '" +
                                std::string(synthetic) +
                                "' needs hwloc, and this troupe was built without it "
                                "(-Dtopology=disabled, or hwloc not found)");
}

#endif

topology::~topology() { delete impl_; }
topology::topology(topology&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }

std::size_t topology::pu_count() const noexcept {
#if defined(TROUPE_HAS_HWLOC)
    if (!impl_->flat) return impl_->count(HWLOC_OBJ_PU, 0);
#endif
    return impl_->cpus.size();
}

std::size_t topology::core_count() const noexcept {
#if defined(TROUPE_HAS_HWLOC)
    if (!impl_->flat) return impl_->count(HWLOC_OBJ_CORE, 0);
#endif
    return impl_->cpus.size();  // one core per hardware thread
}

std::size_t topology::numa_count() const noexcept {
#if defined(TROUPE_HAS_HWLOC)
    if (!impl_->flat) return impl_->count(HWLOC_OBJ_NUMANODE, 1);
#endif
    return 1;
}

distance topology::distance_between(std::size_t a, std::size_t b) const {
#if defined(TROUPE_HAS_HWLOC)
    if (!impl_->flat) {
        hwloc_obj_t pa = impl_->pu(a);
        hwloc_obj_t pb = impl_->pu(b);
        if (pa == pb) return distance::same_pu;
        hwloc_obj_t common = hwloc_get_common_ancestor_obj(impl_->topo, pa, pb);
        // Classify by the closest shared level at or above the common ancestor.
        for (hwloc_obj_t o = common; o; o = o->parent) {
            switch (o->type) {
            case HWLOC_OBJ_CORE: return distance::same_core;
            case HWLOC_OBJ_L1CACHE:
            case HWLOC_OBJ_L2CACHE: return distance::shared_l2;
            case HWLOC_OBJ_L3CACHE: return distance::shared_l3;
            default: break;
            }
            // NUMA nodes hang off the tree as memory children in hwloc 2: the
            // two PUs share a node iff their node sets are the same single node.
            if (hwloc_bitmap_isequal(pa->nodeset, pb->nodeset) &&
                hwloc_bitmap_weight(pa->nodeset) == 1 &&
                hwloc_get_nbobjs_by_type(impl_->topo, HWLOC_OBJ_NUMANODE) > 1)
                return distance::shared_l3;
            if (o->type == HWLOC_OBJ_PACKAGE || o->type == HWLOC_OBJ_DIE)
                return distance::same_package;
            if (o->type == HWLOC_OBJ_MACHINE) break;
        }
        return distance::machine;
    }
#endif
    impl_->check_flat_pu(a);
    impl_->check_flat_pu(b);
    return a == b ? distance::same_pu : distance::same_package;
}

std::vector<std::vector<std::size_t>> topology::group_by_distance(
    std::size_t from, std::span<const std::size_t> worker_pu) const {
    if (from >= worker_pu.size())
        throw std::out_of_range("troupe::topology::group_by_distance: no worker " +
                                std::to_string(from));
    constexpr int classes = static_cast<int>(distance::machine) + 1;
    std::vector<std::size_t> by_class[classes];
    for (std::size_t w = 0; w < worker_pu.size(); ++w) {
        if (w == from) continue;
        by_class[static_cast<int>(distance_between(worker_pu[from], worker_pu[w]))].push_back(w);
    }
    std::vector<std::vector<std::size_t>> groups;
    for (auto& g : by_class)
        if (!g.empty()) groups.push_back(std::move(g));
    return groups;
}

bool topology::bind_current_thread(std::size_t pu) const {
#if defined(TROUPE_HAS_HWLOC)
    if (!impl_->flat) {
        hwloc_obj_t o = impl_->pu(pu);
        if (impl_->synthetic) return false;
        return hwloc_set_cpubind(impl_->topo, o->cpuset, HWLOC_CPUBIND_THREAD) == 0;
    }
#endif
    impl_->check_flat_pu(pu);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(impl_->cpus[pu], &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

bool topology::is_this_system() const noexcept {
#if defined(TROUPE_HAS_HWLOC)
    if (!impl_->flat) return !impl_->synthetic && hwloc_topology_is_thissystem(impl_->topo);
#endif
    return true;
}

}  // namespace troupe
