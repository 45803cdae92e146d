// bench=parallel_for, system=tbb: the twin of bench/core/parallel_for.cpp
// with tbb::parallel_for over a blocked_range (default grain and
// partitioner) and a local sum per range, in a task_arena of `processors`
// threads.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>

#include "bench_util.hpp"
#include "fork_join_work.hpp"

int main(int argc, char** argv) {
    const long n = bench::option(argc, argv, "n", 1000000);
    const long reps = bench::option(argc, argv, "reps", 3);
    const long procs = bench::option(argc, argv, "processors", 2);
    tbb::task_arena arena(static_cast<int>(procs));
    std::uint64_t sum = 0;
    double s = 0;
    const auto once = [&] {
        std::atomic<std::uint64_t> total{0};
        tbb::parallel_for(tbb::blocked_range<long>(0, n), [&](const tbb::blocked_range<long>& r) {
            total.fetch_add(bench::fj::kernel_sum(static_cast<std::uint64_t>(r.begin()),
                                                  static_cast<std::uint64_t>(r.end())),
                            std::memory_order_relaxed);
        });
        return total.load();
    };
    arena.execute([&] {
        sum = once();  // warm-up
        const auto t0 = bench::clock::now();
        for (long k = 0; k < reps; ++k) sum = once();
        s = bench::seconds(t0, bench::clock::now()) / static_cast<double>(reps);
    });
    if (sum != bench::fj::kernel_sum(0, static_cast<std::uint64_t>(n)))
        bench::fail("parallel_for: wrong sum");
    bench::result("parallel_for", "tbb", "seconds", s,
                  "n=" + std::to_string(n) + " processors=" + std::to_string(procs));
}
