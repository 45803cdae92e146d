// bench=sem_uncontended, system=troupe: one thread releases and acquires a
// troupe::semaphore that nobody else touches (the count goes 0 -> 1 -> 0).
// Reports ns_per_op, one op = release + acquire. --ctx=os runs on the main
// OS thread, --ctx=user inside a user thread of a 1-processor cluster.
//
// Twin: bench/peers/std/sem_uncontended.cpp (std::counting_semaphore).
#include <troupe/semaphore.hpp>

#include "bench_util.hpp"
#include "on_context.hpp"

int main(int argc, char** argv) {
    const bench::idle_thread multi_threaded;  // see bench_util.hpp: same path on both sides
    const long iters = bench::option(argc, argv, "iters", 20000000);
    const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
    troupe::semaphore s{0, "bench"};
    const double ns = bench::on_context(ctx, "sem_uncontended: --ctx must be os or user", [&] {
        return bench::ns_per_op(iters, [&] {
            s.release();
            s.acquire();
        });
    });
    if (s.count() != 0) bench::fail("sem_uncontended: units lost or created");
    bench::result("sem_uncontended", "troupe", "ns_per_op", ns, "ctx=" + ctx);
}
