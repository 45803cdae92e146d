// Raw MPI twin of bench/remote/ping_pong.cpp: an 8-byte message bounced
// between ranks 0 and 1 with blocking MPI_Send/MPI_Recv (which busy-poll):
// the transport's limit. Then the same round trip timed one at a time, as
// the twin of troupe's ask loop (remote_ask, _p50, _p99).
// Run: mpirun -np 2 remote_mpi_ping_pong --n=N [--asks=M] (M defaults to N/5)
// With an even number of ranks, pairs (0, 1), (2, 3), ... do the same at
// once (ranks on shared cores); rank 0 reports.
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../../common/bench_util.hpp"

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);  // as troupe runs it
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2 != 0) bench::fail("run with an even number of ranks (mpirun -np 2)");
    const int peer = rank ^ 1, lead = rank % 2 == 0;
    // --binding=NAME (bench/remote/run.sh): how mpirun bound the ranks.
    const std::string tag =
        "ranks=" + std::to_string(size) + " binding=" + bench::binding_label(argc, argv);
    const long n = bench::option(argc, argv, "n", 100000);
    long v = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = bench::clock::now();
    for (long i = 0; i < n; ++i) {
        if (lead) {
            MPI_Send(&v, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&v, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ++v;
            MPI_Send(&v, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD);
        }
    }
    const double s = bench::seconds(t0, bench::clock::now());
    if (rank == 0) {
        if (v != n) bench::fail("lost messages");
        bench::result("remote_ping_pong", "mpi", "ns_per_op", s * 1e9 / double(n), tag);
    }
    const long asks = bench::option(argc, argv, "asks", std::max(n / 5, 1000L));
    std::vector<double> ns(static_cast<std::size_t>(asks));
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < asks; ++i) {
        if (lead) {
            long q = i, r = 0;
            const auto t0 = bench::clock::now();
            MPI_Send(&q, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(&r, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ns[static_cast<std::size_t>(i)] = bench::seconds(t0, bench::clock::now()) * 1e9;
            if (r != i + 1) bench::fail("wrong reply");
        } else {
            long q = 0;
            MPI_Recv(&q, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ++q;
            MPI_Send(&q, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) bench::latency_results("remote_ask", "mpi", ns, tag);
    MPI_Finalize();
}
