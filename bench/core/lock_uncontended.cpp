// bench=lock_uncontended, system=troupe: one thread locks and unlocks a
// troupe::blocking_lock around a tiny critical section, nobody else touches
// it. Reports ns_per_op, one op = lock + increment + unlock.
// --ctx=os runs on the main OS thread, --ctx=user inside a user thread of a
// 1-processor cluster.
//
// Twin: bench/peers/std/lock_uncontended.cpp (std::mutex, OS thread).
#include <troupe/blocking_lock.hpp>

#include "bench_util.hpp"
#include "on_context.hpp"

int main(int argc, char** argv) {
    const bench::idle_thread multi_threaded;  // see bench_util.hpp: same path on both sides
    const long iters = bench::option(argc, argv, "iters", 20000000);
    const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
    troupe::blocking_lock l{"bench"};
    long counter = 0;
    const double ns = bench::on_context(ctx, "lock_uncontended: --ctx must be os or user", [&] {
        return bench::ns_per_op(iters, [&] {
            l.lock();
            ++counter;
            l.unlock();
        });
    });
    if (counter != iters + iters / 10 + 1) bench::fail("lock_uncontended: lost an increment");
    bench::result("lock_uncontended", "troupe", "ns_per_op", ns, "ctx=" + ctx);
}
