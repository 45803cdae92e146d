// bench=lock_contended, system=std: twin of bench/core/lock_contended.cpp
// with std::mutex: two OS threads hammer one lock with a tiny critical
// section for a fixed duration. Reports ns_per_op = elapsed / acquisitions.
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const long ms = bench::option(argc, argv, "ms", 1000);
    constexpr int workers = 2;
    std::mutex m;
    long protected_count = 0;
    std::atomic<int> ready{0};
    std::atomic<bool> go{false}, stop{false};
    long acquisitions[workers] = {};
    std::vector<std::thread> ts;
    for (int i = 0; i < workers; ++i)
        ts.emplace_back([&, i] {
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            long mine = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                m.lock();
                ++protected_count;
                m.unlock();
                ++mine;
            }
            acquisitions[i] = mine;
        });
    while (ready.load() < workers) std::this_thread::yield();
    const auto t0 = bench::clock::now();
    go.store(true, std::memory_order_release);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    stop.store(true, std::memory_order_relaxed);
    for (auto& t : ts) t.join();
    const double elapsed = bench::seconds(t0, bench::clock::now());
    long total = 0;
    for (long a : acquisitions) total += a;
    if (total != protected_count) bench::fail("lock_contended: mutual exclusion broken");
    if (total == 0) bench::fail("lock_contended: no acquisitions");
    bench::result("lock_contended", "std", "ns_per_op", elapsed * 1e9 / static_cast<double>(total),
                  "ctx=os");
}
