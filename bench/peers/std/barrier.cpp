// Twin of bench/core/barrier.cpp: std::barrier and std::latch on OS
// threads (--processors is reported, not enforced: the kernel schedules
// --threads threads on the machine's CPUs).
#include <barrier>
#include <latch>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const std::string prim = bench::option_text(argc, argv, "prim", "barrier");
    const long iters = bench::option(argc, argv, "iters", 200000);
    const long threads = bench::option(argc, argv, "threads", 4);
    const long procs = bench::option(argc, argv, "processors", 2);
    const std::string params =
        "threads=" + std::to_string(threads) + " processors=" + std::to_string(procs);
    if (prim == "latch_uncontended") {
        const bench::idle_thread multi_threaded;
        const double ns = bench::ns_per_op(iters, [&] {
            std::latch l{1};
            l.count_down();
            l.wait();
        });
        bench::result("latch_uncontended", "std", "ns_per_op", ns, "ctx=os");
        return 0;
    }
    long completions = 0;
    auto complete = [&]() noexcept { ++completions; };
    std::barrier b{threads, complete};
    std::unique_ptr<std::optional<std::latch>[]> latches;
    if (prim == "latch") {
        latches = std::make_unique<std::optional<std::latch>[]>(std::size_t(iters));
        for (long i = 0; i < iters; ++i) latches[i].emplace(threads);
    } else if (prim != "barrier") {
        bench::fail("barrier: --prim must be barrier, latch or latch_uncontended");
    }
    std::latch go{1};
    std::vector<std::thread> ts;
    for (long t = 0; t < threads; ++t)
        ts.emplace_back([&] {
            go.wait();
            if (prim == "barrier")
                for (long i = 0; i < iters; ++i) b.arrive_and_wait();
            else
                for (long i = 0; i < iters; ++i) latches[i]->arrive_and_wait();
        });
    const bench::stopwatch sw;
    go.count_down();
    for (auto& t : ts) t.join();
    const double s = sw.seconds();
    if (prim == "barrier" && completions != iters) bench::fail("barrier: completions lost");
    bench::result(prim == "barrier" ? "barrier_cycle" : "latch_rounds", "std", "ns_per_op",
                  s * 1e9 / double(iters), params);
}
