// bench=lock_contended and lock_contended_barging (--bench=NAME),
// system=boost_fiber: twin of bench/core/lock_contended.cpp --ctx=user with
// boost::fibers::mutex: two fibers on two kernel threads (work_stealing
// scheduler, idle threads suspend), fiber k started on thread k, hammer one
// lock with a tiny critical section for --ms milliseconds. Reports
// ns_per_op = elapsed / acquisitions (both fibers) and the wait of every
// acquisition as wait_p50_ns, wait_p99_ns, wait_max_ns (the same cycle
// counter instrumentation as the troupe side, bench/common/wait_stats.hpp).
// boost::fibers::mutex is FIFO-ish (a waiter queue, the unlocker wakes the
// first waiter, which then competes for the lock), so it is the peer of both
// troupe rows.
#include <atomic>
#include <boost/fiber/all.hpp>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "wait_stats.hpp"

namespace bf = boost::fibers;

int main(int argc, char** argv) {
    const long ms = bench::option(argc, argv, "ms", 1000);
    const std::string name = bench::option_text(argc, argv, "bench", "lock_contended");
    const bool timed = bench::option(argc, argv, "waits", 1) != 0;
    constexpr std::uint32_t threads = 2;
    constexpr int workers = 2;

    bf::mutex m;
    long protected_count = 0;  // guarded by m
    int last_owner = -1;       // guarded by m, as protected_count
    long owner_changes = 0;    // acquisitions that took m from the other fiber
    std::atomic<bool> stop{false};
    long acquisitions[workers] = {};
    auto waits = std::make_unique<bench::wait_histogram[]>(workers);
    // The workers and the main fiber meet here; the main fiber then starts
    // the clock.
    bf::barrier start{workers + 1};
    // Completion: each thread's main fiber waits (fiber-aware) until both
    // workers are out before its thread may block in join, since a thread
    // blocked in std::thread::join runs none of the fibers work_stealing may
    // have moved to it.
    int finished = 0;
    bf::mutex done_mutex;
    bf::condition_variable done_cv;
    auto wait_all = [&] {
        std::unique_lock l{done_mutex};
        done_cv.wait(l, [&] { return finished == workers; });
    };
    auto worker = [&](int id) {
        start.wait();
        long mine = 0;
        bench::wait_histogram h;
        while (!stop.load(std::memory_order_relaxed)) {
            if (timed) bench::timed_lock(m, h);
            else m.lock();
            ++protected_count;
            if (last_owner != id) {
                last_owner = id;
                ++owner_changes;
            }
            m.unlock();
            ++mine;
        }
        acquisitions[id] = mine;
        waits[id] = h;
        std::unique_lock l{done_mutex};
        if (++finished == workers) done_cv.notify_all();
    };
    bench::tick_rate rate;
    // Every thread installs work_stealing behind a barrier before any fiber
    // is launched (Boost.Fiber's requirement).
    bf::barrier ready{threads};
    std::thread helper([&] {
        bf::use_scheduling_algorithm<bf::algo::work_stealing>(threads, true);
        ready.wait();
        bf::fiber{worker, 1}.detach();
        wait_all();
    });
    bf::use_scheduling_algorithm<bf::algo::work_stealing>(threads, true);
    ready.wait();
    bf::fiber{worker, 0}.detach();

    start.wait();
    const auto t0 = bench::clock::now();
    boost::this_fiber::sleep_for(std::chrono::milliseconds(ms));
    stop.store(true, std::memory_order_relaxed);
    wait_all();
    const double elapsed = bench::seconds(t0, bench::clock::now());
    helper.join();
    long total = 0;
    bench::wait_histogram all;
    for (int i = 0; i < workers; ++i) {
        total += acquisitions[i];
        all.merge(waits[i]);
    }
    if (total != protected_count) bench::fail("lock_contended: mutual exclusion broken");
    if (total == 0) bench::fail("lock_contended: no acquisitions");
    std::fprintf(stderr, "%s boost_fiber ctx=user: %ld acquisitions, %ld changes of owner\n",
                 name.c_str(), total, owner_changes);
    // --waits=0 is a different configuration: its row must not pool with
    // the instrumented one.
    const std::string params = timed ? "ctx=user" : "ctx=user waits=off";
    bench::result(name.c_str(), "boost_fiber", "ns_per_op",
                  elapsed * 1e9 / static_cast<double>(total), params);
    if (timed) bench::wait_results(name.c_str(), "boost_fiber", all, rate.ns_per_tick(), params);
}
