// bench=fork_join_fib, system=troupe: fib(n) with a fork-join at every call
// (no cutoff: every call but the leaves forks), so the time is almost all
// fork/join overhead. The root runs as a user thread on a cluster of
// `processors` processors (so exactly that many kernel threads compute).
// Reports the seconds of one fib(n), the mean of `reps` after a warm-up.
//
// Twins: bench/peers/tbb/fork_join_fib.cpp (tbb::parallel_invoke),
// bench/peers/openmp/fork_join_fib.cpp (task + taskwait),
// bench/peers/go/fork_join_fib.go (a goroutine and a WaitGroup per call).
#include <troupe/cluster.hpp>
#include <troupe/parallel.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"
#include "fork_join_work.hpp"

namespace {
long fib(int n) {
    if (n < 2) return n;
    long a = 0, b = 0;
    troupe::fork_join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
    return a + b;
}
}  // namespace

int main(int argc, char** argv) {
    const int n = static_cast<int>(bench::option(argc, argv, "n", 30));
    const long reps = bench::option(argc, argv, "reps", 3);
    const long procs = bench::option(argc, argv, "processors", 2);
    troupe::cluster pool{static_cast<std::size_t>(procs)};
    long r = 0;
    double s = 0;
    troupe::thread root{pool, [&] {
                            r = fib(n);  // warm-up (stacks, caches)
                            const auto t0 = bench::clock::now();
                            for (long k = 0; k < reps; ++k) r = fib(n);
                            s = bench::seconds(t0, bench::clock::now()) / static_cast<double>(reps);
                        }};
    root.join();
    if (r != bench::fj::fib_serial(n)) bench::fail("fork_join_fib: wrong result");
    bench::result("fork_join_fib", "troupe", "seconds", s,
                  "n=" + std::to_string(n) + " processors=" + std::to_string(procs));
}
