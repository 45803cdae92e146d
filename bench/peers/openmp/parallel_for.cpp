// bench=parallel_for, system=openmp: the twin of bench/core/parallel_for.cpp
// with `parallel for reduction(+)` (the default static schedule, which
// suits this uniform loop best) on `processors` threads.
#include <omp.h>

#include <cstdint>

#include "bench_util.hpp"
#include "fork_join_work.hpp"

int main(int argc, char** argv) {
    const long n = bench::option(argc, argv, "n", 1000000);
    const long reps = bench::option(argc, argv, "reps", 3);
    const long procs = bench::option(argc, argv, "processors", 2);
    omp_set_num_threads(static_cast<int>(procs));
    const auto once = [n] {
        std::uint64_t total = 0;
#pragma omp parallel for reduction(+ : total)
        for (long i = 0; i < n; ++i) total += bench::fj::kernel(static_cast<std::uint64_t>(i));
        return total;
    };
    std::uint64_t sum = once();  // warm-up (starts the threads)
    const auto t0 = bench::clock::now();
    for (long k = 0; k < reps; ++k) sum = once();
    const double s = bench::seconds(t0, bench::clock::now()) / static_cast<double>(reps);
    if (sum != bench::fj::kernel_sum(0, static_cast<std::uint64_t>(n)))
        bench::fail("parallel_for: wrong sum");
    bench::result("parallel_for", "openmp", "seconds", s,
                  "n=" + std::to_string(n) + " processors=" + std::to_string(procs));
}
