// bench=chan_contend, system=troupe: the thesis' channel contention
// benchmark. P producers and C consumers (troupe user threads on a cluster
// of --processors processors) hammer one channel of --capacity ints for
// --ms milliseconds; reports removes per second (ops_per_s).
//
// Shutdown as in the Go twin: a stop flag ends the producers, then close()
// ends the consumers once they drained the buffer (at most capacity + P
// removes after the clock stopped, negligible).
//
// Twins: bench/peers/go/chan_contend.go, bench/peers/boost_fiber/chan_contend.cpp.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <troupe/channel.hpp>
#include <troupe/cluster.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const long producers = bench::option(argc, argv, "producers", 1);
    const long consumers = bench::option(argc, argv, "consumers", 1);
    const long ms = bench::option(argc, argv, "ms", 2000);
    const long capacity = bench::option(argc, argv, "capacity", 128);
    const long procs = bench::option(argc, argv, "processors", 2);

    troupe::cluster pool{static_cast<std::size_t>(procs)};
    troupe::channel<int> ch{static_cast<std::size_t>(capacity), "contend"};
    std::atomic<bool> start{false}, stop{false};
    std::atomic<long> removed{0}, inserted{0};
    std::vector<troupe::thread> ts;
    for (long i = 0; i < consumers; ++i)
        ts.emplace_back(pool, [&] {
            while (!start.load(std::memory_order_acquire)) troupe::this_thread::yield();
            long n = 0;
            for (int v : ch) n += v;  // every element is 1
            removed.fetch_add(n);
        });
    std::vector<troupe::thread> ps;
    for (long i = 0; i < producers; ++i)
        ps.emplace_back(pool, [&] {
            while (!start.load(std::memory_order_acquire)) troupe::this_thread::yield();
            long n = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                ch.insert(1);
                ++n;
            }
            inserted.fetch_add(n);
        });
    const double elapsed = bench::timed_window(start, stop, ms);
    for (auto& t : ps) t.join();
    ch.close();
    for (auto& t : ts) t.join();
    if (removed.load() != inserted.load()) bench::fail("chan_contend: values lost");
    bench::result(
        "chan_contend", "troupe", "ops_per_s", static_cast<double>(removed.load()) / elapsed,
        "producers=" + std::to_string(producers) + " consumers=" + std::to_string(consumers));
}
