// Whether this rank has a spare core to spin on. A rank's threads poll MPI
// (Open MPI has no arrival notification); spinning while polling is the
// fastest way to see a message only where the spinner does not take the
// CPU that the thread the message is for, or another rank, needs. Under
// mpirun's default binding a rank has one CPU; with more ranks than cores
// several ranks share theirs. In both cases the engine thread, polling
// alone, yields the CPU after every pass that did work (it may have woken
// the worker its delivery is for, which needs this CPU), and core's park
// spin does the same for a thread waiting for its ask's reply on a
// one-CPU rank (it receives the reply itself, as a raw MPI receive does).
// Yielding after every poll instead was measured worse on a loaded
// machine (each yield hands the CPU to another process): docs/remote.md,
// "Binding".
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "engine.hpp"

namespace troupe::remote::detail {

binding probe_binding() {
    binding b;
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) return b;  // unknown: keep spinning
    b.cpus = CPU_COUNT(&mine);
    // The ranks of this node whose masks overlap ours (ourselves included).
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int n = 1;
    MPI_Comm_size(node, &n);
    std::vector<cpu_set_t> all(static_cast<std::size_t>(n));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node);
    MPI_Comm_free(&node);
    b.sharers = 0;
    for (cpu_set_t& other : all) {
        cpu_set_t both;
        CPU_AND(&both, &mine, &other);
        if (CPU_COUNT(&both) > 0) ++b.sharers;
    }
    // One spinning thread per rank at a time (the asker or the engine),
    // beside the thread that runs the behaviour: a rank needs two CPUs, and
    // at least one per rank sharing them.
    b.spare = b.cpus >= 2 && b.cpus >= b.sharers;
    // Where troupe must degrade, say so once for the job (rank 0): ranks
    // sharing CPUs take turns on them, and a round trip waits for turns.
    int shared = b.sharers > b.cpus ? 1 : 0, any = 0;
    MPI_Allreduce(&shared, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0 && any > 0) {
        std::fprintf(stderr,
                     "troupe::remote: %d rank(s) share their CPUs with more ranks than CPUs "
                     "(rank 0: %d ranks on %d CPU(s)); remote round trips wait for turns on them "
                     "(docs/remote.md, \"Binding\")\n",
                     any, b.sharers, b.cpus);
        std::fflush(stderr);
    }
    return b;
}

void engine::set_binding(const binding& b) noexcept {
    binding_ = b;
    progress_.spin_freely.store(b.spare, std::memory_order_relaxed);
}

}  // namespace troupe::remote::detail
