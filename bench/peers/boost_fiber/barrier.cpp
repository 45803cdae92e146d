// Twin of bench/core/barrier.cpp (--prim=barrier): boost::fibers::barrier
// with --threads fibers. --processors=1: all fibers on the main thread
// (Boost.Fiber's default round_robin); --processors=N > 1: the
// shared_work scheduler on N threads (the main thread and N-1 helpers).
// Boost.Fiber's barrier has no completion function: the last arrival
// (the one barrier::wait() returns true to) counts the phase instead.
#include <boost/fiber/all.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const std::string prim = bench::option_text(argc, argv, "prim", "barrier");
    const long iters = bench::option(argc, argv, "iters", 200000);
    const long threads = bench::option(argc, argv, "threads", 4);
    const long procs = bench::option(argc, argv, "processors", 1);
    if (prim != "barrier") return 0;  // std::latch-like primitives: not in Boost.Fiber
    const std::string params =
        "threads=" + std::to_string(threads) + " processors=" + std::to_string(procs);
    std::atomic<long> completions{0};
    boost::fibers::barrier b{std::size_t(threads)};
    std::vector<std::thread> helpers;
    std::atomic<bool> done{false};
    boost::fibers::mutex done_m;
    boost::fibers::condition_variable done_cv;
    bool finished = false;
    if (procs > 1) {
        boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>();
        for (long i = 1; i < procs; ++i)
            helpers.emplace_back([&] {
                boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>();
                std::unique_lock g{done_m};
                done_cv.wait(g, [&] { return finished; });
            });
    }
    const bench::stopwatch sw;
    std::vector<boost::fibers::fiber> fs;
    for (long t = 0; t < threads; ++t)
        fs.emplace_back([&] {
            for (long i = 0; i < iters; ++i)
                if (b.wait()) completions.fetch_add(1, std::memory_order_relaxed);
        });
    for (auto& f : fs) f.join();
    const double s = sw.seconds();
    {
        std::unique_lock g{done_m};
        finished = true;
    }
    done_cv.notify_all();
    for (auto& h : helpers) h.join();
    (void)done;
    if (completions.load() != iters) bench::fail("barrier: completions lost");
    bench::result("barrier_cycle", "boost_fiber", "ns_per_op", s * 1e9 / double(iters), params);
}
