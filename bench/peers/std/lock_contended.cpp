// bench=lock_contended, system=std: twin of bench/core/lock_contended.cpp
// with std::mutex: two OS threads hammer one lock with a tiny critical
// section for a fixed duration. Reports ns_per_op = elapsed / acquisitions
// and the wait percentiles of every acquisition (bench/common/wait_stats.hpp,
// the same instrumentation as the troupe side). --bench=NAME prints NAME as
// the bench (the troupe program has one name per lock kind).
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "wait_stats.hpp"

int main(int argc, char** argv) {
    const long ms = bench::option(argc, argv, "ms", 1000);
    const std::string name = bench::option_text(argc, argv, "bench", "lock_contended");
    constexpr int workers = 2;
    std::mutex m;
    long protected_count = 0;
    std::atomic<int> ready{0};
    std::atomic<bool> go{false}, stop{false};
    long acquisitions[workers] = {};
    auto waits = std::make_unique<bench::wait_histogram[]>(workers);
    bench::tick_rate rate;
    std::vector<std::thread> ts;
    for (int i = 0; i < workers; ++i)
        ts.emplace_back([&, i] {
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            long mine = 0;
            bench::wait_histogram h;
            while (!stop.load(std::memory_order_relaxed)) {
                const std::uint64_t t0 = bench::ticks();
                m.lock();
                h.add(bench::ticks() - t0);
                ++protected_count;
                m.unlock();
                ++mine;
            }
            acquisitions[i] = mine;
            waits[i] = h;
        });
    while (ready.load() < workers) std::this_thread::yield();
    const auto t0 = bench::clock::now();
    go.store(true, std::memory_order_release);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    stop.store(true, std::memory_order_relaxed);
    for (auto& t : ts) t.join();
    const double elapsed = bench::seconds(t0, bench::clock::now());
    long total = 0;
    bench::wait_histogram all;
    for (int i = 0; i < workers; ++i) {
        total += acquisitions[i];
        all.merge(waits[i]);
    }
    if (total != protected_count) bench::fail("lock_contended: mutual exclusion broken");
    if (total == 0) bench::fail("lock_contended: no acquisitions");
    bench::result(name.c_str(), "std", "ns_per_op", elapsed * 1e9 / static_cast<double>(total),
                  "ctx=os");
    bench::wait_results(name.c_str(), "std", all, rate.ns_per_tick(), "ctx=os");
}
