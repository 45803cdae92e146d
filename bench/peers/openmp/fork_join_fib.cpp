// bench=fork_join_fib, system=openmp: the twin of
// bench/core/fork_join_fib.cpp with an OpenMP task per call (no cutoff)
// and a taskwait, in a parallel region of `processors` threads started
// once (a single thread makes the root call).
#include <omp.h>

#include "bench_util.hpp"
#include "fork_join_work.hpp"

namespace {
long fib(int n) {
    if (n < 2) return n;
    long a = 0, b = 0;
#pragma omp task shared(a)
    a = fib(n - 1);
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}
}  // namespace

int main(int argc, char** argv) {
    const int n = static_cast<int>(bench::option(argc, argv, "n", 30));
    const long reps = bench::option(argc, argv, "reps", 3);
    const long procs = bench::option(argc, argv, "processors", 2);
    omp_set_num_threads(static_cast<int>(procs));
    long r = 0;
    double s = 0;
#pragma omp parallel
#pragma omp single
    {
        r = fib(n);  // warm-up
        const auto t0 = bench::clock::now();
        for (long k = 0; k < reps; ++k) r = fib(n);
        s = bench::seconds(t0, bench::clock::now()) / static_cast<double>(reps);
    }
    if (r != bench::fj::fib_serial(n)) bench::fail("fork_join_fib: wrong result");
    bench::result("fork_join_fib", "openmp", "seconds", s,
                  "n=" + std::to_string(n) + " processors=" + std::to_string(procs));
}
