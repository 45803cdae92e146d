// bench=lock_contended, system=std: twin of bench/core/lock_contended.cpp
// with std::mutex: two OS threads hammer one lock with a tiny critical
// section for a fixed duration. Reports ns_per_op = elapsed / acquisitions
// and the wait percentiles of every acquisition (bench/common/wait_stats.hpp,
// timed_lock, the same instrumentation as the troupe side). --bench=NAME prints NAME as
// the bench (the troupe program has one name per lock kind). --waits=0: no
// cycle-counter reads and no wait rows, as in the troupe program.
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "wait_stats.hpp"

int main(int argc, char** argv) {
    const long ms = bench::option(argc, argv, "ms", 1000);
    const std::string name = bench::option_text(argc, argv, "bench", "lock_contended");
    const bool timed = bench::option(argc, argv, "waits", 1) != 0;
    constexpr int workers = 2;
    std::mutex m;
    long protected_count = 0;
    int last_owner = -1;     // guarded by m, as protected_count
    long owner_changes = 0;  // acquisitions that took m from the other thread
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
                if (timed) bench::timed_lock(m, h);
                else m.lock();
                ++protected_count;
                if (last_owner != i) {
                    last_owner = i;
                    ++owner_changes;
                }
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
    std::fprintf(stderr, "%s std ctx=os: %ld acquisitions, %ld changes of owner\n", name.c_str(),
                 total, owner_changes);
    // --waits=0 is a different configuration: its row must not pool with
    // the instrumented one.
    const std::string params = timed ? "ctx=os" : "ctx=os waits=off";
    bench::result(name.c_str(), "std", "ns_per_op", elapsed * 1e9 / static_cast<double>(total),
                  params);
    if (timed) bench::wait_results(name.c_str(), "std", all, rate.ns_per_tick(), params);
}
