// Raw MPI twin of bench/remote/ping_pong.cpp: an 8-byte message bounced
// between ranks 0 and 1 with blocking MPI_Send/MPI_Recv (which busy-poll):
// the transport's limit. Run: mpirun -np 2 remote_mpi_ping_pong --n=N
#include <mpi.h>

#include "../../common/bench_util.hpp"

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);  // as troupe runs it
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) bench::fail("run with mpirun -np 2");
    const long n = bench::option(argc, argv, "n", 100000);
    long v = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = bench::clock::now();
    for (long i = 0; i < n; ++i) {
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ++v;
            MPI_Send(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD);
        }
    }
    const double s = bench::seconds(t0, bench::clock::now());
    if (rank == 0) {
        if (v != n) bench::fail("lost messages");
        bench::result("remote_ping_pong", "mpi", "ns_per_op", s * 1e9 / double(n), "ranks=2");
    }
    MPI_Finalize();
}
