// bench=fork_join_fib, system=tbb: the twin of bench/core/fork_join_fib.cpp
// with tbb::parallel_invoke at every call (no cutoff), in a task_arena of
// `processors` threads (the main thread is one of them).
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include "bench_util.hpp"
#include "fork_join_work.hpp"

namespace {
long fib(int n) {
    if (n < 2) return n;
    long a = 0, b = 0;
    tbb::parallel_invoke([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
    return a + b;
}
}  // namespace

int main(int argc, char** argv) {
    const int n = static_cast<int>(bench::option(argc, argv, "n", 30));
    const long reps = bench::option(argc, argv, "reps", 3);
    const long procs = bench::option(argc, argv, "processors", 2);
    tbb::task_arena arena(static_cast<int>(procs));
    long r = 0;
    double s = 0;
    arena.execute([&] {
        r = fib(n);  // warm-up (starts the workers)
        const auto t0 = bench::clock::now();
        for (long k = 0; k < reps; ++k) r = fib(n);
        s = bench::seconds(t0, bench::clock::now()) / static_cast<double>(reps);
    });
    if (r != bench::fj::fib_serial(n)) bench::fail("fork_join_fib: wrong result");
    bench::result("fork_join_fib", "tbb", "seconds", s,
                  "n=" + std::to_string(n) + " processors=" + std::to_string(procs));
}
