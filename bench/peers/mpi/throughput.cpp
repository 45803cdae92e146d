// Raw MPI twin of bench/remote/throughput.cpp: S threads of rank 0 stream
// 8-byte messages (one MPI_Send each) to rank 1, which receives them all and
// acknowledges. Run: mpirun -np 2 remote_mpi_throughput --n=N --senders=S
#include <mpi.h>

#include <thread>
#include <vector>

#include "../../common/bench_util.hpp"

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) bench::fail("run with mpirun -np 2");
    const long senders = bench::option(argc, argv, "senders", 1);
    const long n = bench::option(argc, argv, "n", 1000000) / senders * senders;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        const auto t0 = bench::clock::now();
        std::vector<std::thread> ts;
        for (long s = 0; s < senders; ++s)
            ts.emplace_back([&] {
                for (long k = 0; k < n / senders; ++k)
                    MPI_Send(&k, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
            });
        for (auto& t : ts) t.join();
        long got = 0;
        MPI_Recv(&got, 1, MPI_LONG, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double s = bench::seconds(t0, bench::clock::now());
        if (got != n) bench::fail("lost messages");
        bench::result("remote_throughput", "mpi", "ops_per_s", double(n) / s,
                      ("senders=" + std::to_string(senders)).c_str());
    } else {
        long v = 0, count = 0;
        for (; count < n; ++count)
            MPI_Recv(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&count, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD);
    }
    MPI_Finalize();
}
