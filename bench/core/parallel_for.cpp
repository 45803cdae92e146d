// bench=parallel_for, system=troupe: the sum of a compute-bound kernel
// (bench/core/fork_join_work.hpp, about 200 cycles per index, no memory
// traffic) over [0, n) with troupe::parallel_for_blocks (automatic grain,
// a local sum per block). The root runs as a user thread on a cluster of
// `processors` processors. Reports the seconds of one loop, the mean of
// `reps` after a warm-up.
//
// Twins: bench/peers/tbb/parallel_for.cpp (tbb::parallel_for, default
// partitioner), bench/peers/openmp/parallel_for.cpp (parallel for with a
// reduction), bench/peers/go/parallel_for.go (a goroutine per chunk, 8
// chunks per processor, and a WaitGroup).
#include <atomic>
#include <troupe/cluster.hpp>
#include <troupe/parallel.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"
#include "fork_join_work.hpp"

int main(int argc, char** argv) {
    const long n = bench::option(argc, argv, "n", 1000000);
    const long reps = bench::option(argc, argv, "reps", 3);
    const long procs = bench::option(argc, argv, "processors", 2);
    troupe::cluster pool{static_cast<std::size_t>(procs)};
    std::uint64_t sum = 0;
    double s = 0;
    const auto once = [&] {
        std::atomic<std::uint64_t> total{0};
        troupe::parallel_for_blocks(0L, n, [&](long b, long e) {
            total.fetch_add(
                bench::fj::kernel_sum(static_cast<std::uint64_t>(b), static_cast<std::uint64_t>(e)),
                std::memory_order_relaxed);
        });
        return total.load();
    };
    troupe::thread root{pool, [&] {
                            sum = once();  // warm-up
                            const auto t0 = bench::clock::now();
                            for (long k = 0; k < reps; ++k) sum = once();
                            s = bench::seconds(t0, bench::clock::now()) / static_cast<double>(reps);
                        }};
    root.join();
    if (sum != bench::fj::kernel_sum(0, static_cast<std::uint64_t>(n)))
        bench::fail("parallel_for: wrong sum");
    bench::result("parallel_for", "troupe", "seconds", s,
                  "n=" + std::to_string(n) + " processors=" + std::to_string(procs));
}
