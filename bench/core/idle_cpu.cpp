// bench=idle_cpu, system=troupe: a 4-processor cluster with 1,000 user
// threads parked on a semaphore. Measures the whole process's CPU time
// (getrusage: user + system, every kernel thread) over a wall-clock window
// while nothing is runnable, then wakes and joins them all. Reports
// cpu_percent = CPU time / wall time * 100 (100 = one core busy).
// --ms: window in milliseconds.
#include <sys/resource.h>

#include <atomic>
#include <thread>
#include <vector>

#include <troupe/cluster.hpp>
#include <troupe/semaphore.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

namespace {
double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
}  // namespace

int main(int argc, char** argv) {
    const long ms = bench::option(argc, argv, "ms", 5000);
    const long threads = bench::option(argc, argv, "threads", 1000);
    const long procs = bench::option(argc, argv, "processors", 4);
    troupe::cluster pool{static_cast<std::size_t>(procs)};
    troupe::semaphore wake_up{0};
    std::atomic<long> woken{0};
    std::vector<troupe::thread> ts;
    ts.reserve(static_cast<std::size_t>(threads));
    for (long i = 0; i < threads; ++i)
        ts.emplace_back(pool, [&] {
            wake_up.acquire();
            woken.fetch_add(1, std::memory_order_relaxed);
        });
    // Every thread must be parked before the window opens.
    while (wake_up.waiters() < static_cast<std::size_t>(threads))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const double c0 = cpu_seconds();
    const auto t0 = bench::clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    const double c1 = cpu_seconds();
    const auto t1 = bench::clock::now();
    wake_up.release(static_cast<std::size_t>(threads));
    for (auto& t : ts) t.join();
    if (woken.load() != threads) bench::fail("idle_cpu: a parked thread was not woken");
    bench::result("idle_cpu", "troupe", "cpu_percent", (c1 - c0) / bench::seconds(t0, t1) * 100.0,
                  "threads=" + std::to_string(threads) + " processors=" + std::to_string(procs));
}
