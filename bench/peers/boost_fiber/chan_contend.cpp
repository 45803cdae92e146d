// bench=chan_contend, system=boost_fiber: twin of
// bench/channels/chan_contend.cpp. P producer and C consumer fibers on
// --processors kernel threads (work_stealing scheduler, idle threads
// suspend) share one buffered_channel<int> for --ms milliseconds; reports
// pops per second. Like troupe's round-robin placement, fiber k starts on
// thread k mod processors (consumers first), so producers and consumers
// really run on different threads; launched all from one thread
// (--spread=0), Boost leaves a 1+1 run entirely on that thread and measures
// no cross-thread traffic at all.
// Boost's buffered_channel capacity must be a power of two and holds
// capacity-1 elements (128 -> 127). Shutdown as in the Go twin: a stop flag
// ends the producers, then close() ends the consumers once they drained the
// buffer.
#include <atomic>
#include <boost/fiber/all.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"

namespace bf = boost::fibers;

int main(int argc, char** argv) {
    const long producers = bench::option(argc, argv, "producers", 1);
    const long consumers = bench::option(argc, argv, "consumers", 1);
    const long ms = bench::option(argc, argv, "ms", 2000);
    const long capacity = bench::option(argc, argv, "capacity", 128);
    const auto threads = static_cast<std::uint32_t>(bench::option(argc, argv, "processors", 2));
    // --suspend=0: idle threads spin instead of sleeping (slower here: a 1+1
    // run crawls). --spread=0: launch every fiber from the main thread and
    // let work_stealing place them (a 1+1 run then stays on one thread).
    const bool suspend = bench::option(argc, argv, "suspend", 1) != 0;
    const bool spread = bench::option(argc, argv, "spread", 1) != 0;

    bf::buffered_channel<int> ch{static_cast<std::size_t>(capacity)};
    std::atomic<bool> stop{false};
    std::atomic<long> removed{0}, inserted{0};
    // Every fiber waits here, and so does the main fiber, which starts the clock.
    bf::barrier start{static_cast<std::size_t>(producers + consumers + 1)};
    bf::barrier producers_done{static_cast<std::size_t>(producers + 1)};

    // Completion: every fiber counts itself out; each thread's main fiber
    // waits (fiber-aware) until all are out before its thread may block,
    // since a thread blocked in std::thread::join runs none of the fibers
    // work_stealing may have moved to it.
    const long total = producers + consumers;
    long finished = 0;
    bf::mutex done_mutex;
    bf::condition_variable done_cv;
    auto finish = [&] {
        std::unique_lock l{done_mutex};
        if (++finished == total) done_cv.notify_all();
    };
    auto wait_all = [&] {
        std::unique_lock l{done_mutex};
        done_cv.wait(l, [&] { return finished == total; });
    };

    auto consumer = [&] {
        start.wait();
        long n = 0;
        int v;
        while (ch.pop(v) == bf::channel_op_status::success) n += v;  // every element is 1
        removed.fetch_add(n);
        finish();
    };
    auto producer = [&] {
        start.wait();
        long n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            if (ch.push(1) != bf::channel_op_status::success) break;
            ++n;
        }
        inserted.fetch_add(n);
        producers_done.wait();
        finish();
    };
    // Thread t launches fibers t, t + threads, ...: consumers are 0..C-1,
    // producers C..C+P-1. Every thread installs work_stealing behind a
    // barrier before any fiber is launched (Boost.Fiber's requirement).
    bf::barrier ready{threads};
    auto launch = [&](std::uint32_t t) {
        if (!spread && t != 0) return;
        const long step = spread ? threads : 1;
        for (long k = t; k < total; k += step) {
            if (k < consumers) bf::fiber{consumer}.detach();
            else bf::fiber{producer}.detach();
        }
    };
    std::vector<std::thread> helpers;
    for (std::uint32_t t = 1; t < threads; ++t)
        helpers.emplace_back([&, t] {
            bf::use_scheduling_algorithm<bf::algo::work_stealing>(threads, suspend);
            ready.wait();
            launch(t);
            wait_all();
        });
    bf::use_scheduling_algorithm<bf::algo::work_stealing>(threads, suspend);
    ready.wait();
    launch(0);

    start.wait();
    const auto t0 = bench::clock::now();
    boost::this_fiber::sleep_for(std::chrono::milliseconds(ms));
    stop.store(true, std::memory_order_relaxed);
    const auto t1 = bench::clock::now();
    producers_done.wait();
    ch.close();
    wait_all();
    for (auto& t : helpers) t.join();
    if (removed.load() != inserted.load()) bench::fail("chan_contend: values lost");
    bench::result("chan_contend", "boost_fiber", "ops_per_s",
                  static_cast<double>(removed.load()) / bench::seconds(t0, t1),
                  "producers=" + std::to_string(producers) + " consumers=" +
                      std::to_string(consumers) + (spread ? "" : " placement=one_launcher"));
}
