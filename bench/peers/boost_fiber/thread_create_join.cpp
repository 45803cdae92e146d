// bench=thread_create_join, system=boost_fiber: twin of
// bench/core/thread_create_join.cpp. One fiber created and joined at a time
// by a fiber, all on one kernel thread with Boost.Fiber's default scheduler
// (round_robin) and default stack allocator (fixedsize_stack, 128 KiB). One
// at a time means the allocator reuses the same freed block, so no page
// faults after the warm-up. Reports ns_per_op.
#include <boost/fiber/all.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const long iters = bench::option(argc, argv, "iters", 1000000);
    double ns = 0;
    long ran = 0;
    boost::fibers::fiber driver{[&] {
        auto once = [&] {
            boost::fibers::fiber f{[&ran] { ++ran; }};
            f.join();
        };
        for (long i = 0; i < iters / 10 + 1; ++i) once();
        const auto t0 = bench::clock::now();
        for (long i = 0; i < iters; ++i) once();
        const auto t1 = bench::clock::now();
        ns = bench::seconds(t0, t1) * 1e9 / static_cast<double>(iters);
    }};
    driver.join();
    if (ran != iters + iters / 10 + 1) bench::fail("thread_create_join: a fiber did not run");
    bench::result("thread_create_join", "boost_fiber", "ns_per_op", ns);
}
