// bench=barrier_cycle / latch_rounds / latch_uncontended, system=troupe.
//  --prim=barrier: --threads user threads on --processors processors each
//    arrive_and_wait() --iters phases on one troupe::barrier (ns per phase).
//  --prim=latch: the same threads each arrive_and_wait() on --iters
//    single-use troupe::latch objects in turn (ns per latch).
//  --prim=latch_uncontended: one thread (--ctx=os|user) makes a latch of 1,
//    counts it down and waits (ns per construct+count_down+wait).
// Twins: bench/peers/std/barrier.cpp (std::barrier, std::latch, OS
// threads), bench/peers/boost_fiber/barrier.cpp (boost::fibers::barrier).
#include <troupe/barrier.hpp>
#include <troupe/cluster.hpp>
#include <troupe/latch.hpp>
#include <troupe/thread.hpp>

#include <memory>
#include <optional>
#include <vector>

#include "bench_util.hpp"
#include "on_context.hpp"

int main(int argc, char** argv) {
    const std::string prim = bench::option_text(argc, argv, "prim", "barrier");
    const long iters = bench::option(argc, argv, "iters", 200000);
    const long threads = bench::option(argc, argv, "threads", 4);
    const long procs = bench::option(argc, argv, "processors", 2);
    const std::string params =
        "threads=" + std::to_string(threads) + " processors=" + std::to_string(procs);
    if (prim == "latch_uncontended") {
        const bench::idle_thread multi_threaded;
        const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
        const double ns = bench::on_context(ctx, "barrier: --ctx must be os or user", [&] {
            return bench::ns_per_op(iters, [&] {
                troupe::latch l{1};
                l.count_down();
                l.wait();
            });
        });
        bench::result("latch_uncontended", "troupe", "ns_per_op", ns, "ctx=" + ctx);
        return 0;
    }
    troupe::cluster pool{std::size_t(procs)};
    long completions = 0;
    troupe::barrier b{threads, [&]() noexcept { ++completions; }};
    std::unique_ptr<std::optional<troupe::latch>[]> latches;
    if (prim == "latch") {
        latches = std::make_unique<std::optional<troupe::latch>[]>(std::size_t(iters));
        for (long i = 0; i < iters; ++i) latches[i].emplace(std::size_t(threads));
    } else if (prim != "barrier") {
        bench::fail("barrier: --prim must be barrier, latch or latch_uncontended");
    }
    troupe::latch go{1};
    std::vector<troupe::thread> ts;
    for (long t = 0; t < threads; ++t)
        ts.emplace_back(pool, [&] {
            go.wait();
            if (prim == "barrier")
                for (long i = 0; i < iters; ++i) b.arrive_and_wait();
            else
                for (long i = 0; i < iters; ++i) latches[i]->arrive_and_wait();
        });
    const bench::stopwatch sw;
    go.count_down();
    ts.clear();
    const double s = sw.seconds();
    if (prim == "barrier" && completions != iters) bench::fail("barrier: completions lost");
    bench::result(prim == "barrier" ? "barrier_cycle" : "latch_rounds", "troupe", "ns_per_op",
                  s * 1e9 / double(iters), params);
}
