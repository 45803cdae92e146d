// bench=thread_create_join, system=std: twin of
// bench/core/thread_create_join.cpp with std::thread (one kernel thread
// created and joined at a time). Reports ns_per_op.
#include <thread>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const long iters = bench::option(argc, argv, "iters", 20000);
    long ran = 0;
    auto once = [&] {
        std::thread t{[&ran] { ++ran; }};
        t.join();
    };
    for (long i = 0; i < iters / 10 + 1; ++i) once();
    const auto t0 = bench::clock::now();
    for (long i = 0; i < iters; ++i) once();
    const auto t1 = bench::clock::now();
    if (ran != iters + iters / 10 + 1) bench::fail("thread_create_join: a thread did not run");
    bench::result("thread_create_join", "std", "ns_per_op",
                  bench::seconds(t0, t1) * 1e9 / static_cast<double>(iters));
}
