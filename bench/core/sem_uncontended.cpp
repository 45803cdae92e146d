// bench=sem_uncontended, system=troupe: one thread releases and acquires a
// troupe::semaphore that nobody else touches (the count goes 0 -> 1 -> 0).
// Reports ns_per_op, one op = release + acquire. --ctx=os runs on the main
// OS thread, --ctx=user inside a user thread of a 1-processor cluster.
//
// Twin: bench/peers/std/sem_uncontended.cpp (std::counting_semaphore).
#include <troupe/cluster.hpp>
#include <troupe/semaphore.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

namespace {
double run(troupe::semaphore& s, long iters) {
    for (long i = 0; i < iters / 10 + 1; ++i) {
        s.release();
        s.acquire();
    }
    const auto t0 = bench::clock::now();
    for (long i = 0; i < iters; ++i) {
        s.release();
        s.acquire();
    }
    const auto t1 = bench::clock::now();
    return bench::seconds(t0, t1) * 1e9 / static_cast<double>(iters);
}
}  // namespace

int main(int argc, char** argv) {
    const bench::idle_thread multi_threaded;  // see bench_util.hpp: same path on both sides
    const long iters = bench::option(argc, argv, "iters", 20000000);
    const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
    troupe::semaphore s{0, "bench"};
    double ns = 0;
    if (ctx == "user") {
        troupe::cluster pool{1};
        troupe::thread t{pool, [&] { ns = run(s, iters); }};
        t.join();
    } else if (ctx == "os") {
        ns = run(s, iters);
    } else {
        bench::fail("sem_uncontended: --ctx must be os or user");
    }
    if (s.count() != 0) bench::fail("sem_uncontended: units lost or created");
    bench::result("sem_uncontended", "troupe", "ns_per_op", ns, "ctx=" + ctx);
}
