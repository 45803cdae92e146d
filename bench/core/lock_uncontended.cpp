// bench=lock_uncontended, system=troupe: one thread locks and unlocks a
// troupe::blocking_lock around a tiny critical section, nobody else touches
// it. Reports ns_per_op, one op = lock + increment + unlock.
// --ctx=os runs on the main OS thread, --ctx=user inside a user thread of a
// 1-processor cluster.
//
// Twin: bench/peers/std/lock_uncontended.cpp (std::mutex, OS thread).
#include <troupe/blocking_lock.hpp>
#include <troupe/cluster.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

namespace {
double run(troupe::blocking_lock& l, long iters, long& counter) {
    for (long i = 0; i < iters / 10 + 1; ++i) {
        l.lock();
        ++counter;
        l.unlock();
    }
    const auto t0 = bench::clock::now();
    for (long i = 0; i < iters; ++i) {
        l.lock();
        ++counter;
        l.unlock();
    }
    const auto t1 = bench::clock::now();
    return bench::seconds(t0, t1) * 1e9 / static_cast<double>(iters);
}
}  // namespace

int main(int argc, char** argv) {
    const bench::idle_thread multi_threaded;  // see bench_util.hpp: same path on both sides
    const long iters = bench::option(argc, argv, "iters", 20000000);
    const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
    troupe::blocking_lock l{"bench"};
    long counter = 0;
    double ns = 0;
    if (ctx == "user") {
        troupe::cluster pool{1};
        troupe::thread t{pool, [&] { ns = run(l, iters, counter); }};
        t.join();
    } else if (ctx == "os") {
        ns = run(l, iters, counter);
    } else {
        bench::fail("lock_uncontended: --ctx must be os or user");
    }
    if (counter != iters + iters / 10 + 1) bench::fail("lock_uncontended: lost an increment");
    bench::result("lock_uncontended", "troupe", "ns_per_op", ns, "ctx=" + ctx);
}
