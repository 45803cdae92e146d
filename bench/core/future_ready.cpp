// bench=future_ready, system=troupe: one thread reads a fulfilled
// troupe::future<long> over and over. --op=get: `sum += f.get()`;
// --op=available: `n += f.available()`. Reports ns_per_op. --ctx=os runs on
// the main OS thread, --ctx=user inside a user thread of a 1-processor
// cluster.
//
// Twin: bench/peers/std/future_ready.cpp (a value guarded by std::mutex and
// a flag: a ready std::future's get() is single-use, so not comparable).
#include <troupe/future.hpp>

#include "bench_util.hpp"
#include "on_context.hpp"

int main(int argc, char** argv) {
    const bench::idle_thread multi_threaded;  // see bench_util.hpp: same path on both sides
    const long iters = bench::option(argc, argv, "iters", 50000000);
    const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
    const std::string which = bench::option_text(argc, argv, "op", "get");
    troupe::future<long> f;
    f.fulfil(1);
    // The loop body must not be hoisted: the future is read through a
    // pointer the compiler cannot see through between iterations.
    troupe::future<long>* volatile fp = &f;
    long sum = 0;
    auto body = [&] {
        if (which == "get") return bench::ns_per_op(iters, [&] { sum += fp->get(); });
        if (which == "available") return bench::ns_per_op(iters, [&] { sum += fp->available(); });
        bench::fail("future_ready: --op must be get or available");
    };
    const double ns = bench::on_context(ctx, "future_ready: --ctx must be os or user", body);
    if (sum != iters + iters / 10 + 1) bench::fail("future_ready: wrong value");
    bench::result("future_ready", "troupe", "ns_per_op", ns, "op=" + which + " ctx=" + ctx);
}
