// bench=future_ready, system=troupe: one thread reads a fulfilled
// troupe::future<long> over and over. --op=get: `sum += f.get()`;
// --op=available: `n += f.available()`. Reports ns_per_op. --ctx=os runs on
// the main OS thread, --ctx=user inside a user thread of a 1-processor
// cluster.
//
// Twin: bench/peers/std/future_ready.cpp (a value guarded by std::mutex and
// a flag: a ready std::future's get() is single-use, so not comparable).
#include <troupe/cluster.hpp>
#include <troupe/future.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

namespace {
// The loop body must not be hoisted: the future is read through a pointer
// the compiler cannot see through between iterations.
template <class Op>
double run(long iters, Op op) {
    for (long i = 0; i < iters / 10 + 1; ++i) op();
    const auto t0 = bench::clock::now();
    for (long i = 0; i < iters; ++i) op();
    const auto t1 = bench::clock::now();
    return bench::seconds(t0, t1) * 1e9 / static_cast<double>(iters);
}
}  // namespace

int main(int argc, char** argv) {
    const bench::idle_thread multi_threaded;  // see bench_util.hpp: same path on both sides
    const long iters = bench::option(argc, argv, "iters", 50000000);
    const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
    const std::string which = bench::option_text(argc, argv, "op", "get");
    troupe::future<long> f;
    f.fulfil(1);
    troupe::future<long>* volatile fp = &f;
    long sum = 0;
    auto body = [&] {
        if (which == "get") return run(iters, [&] { sum += fp->get(); });
        if (which == "available") return run(iters, [&] { sum += fp->available(); });
        bench::fail("future_ready: --op must be get or available");
    };
    double ns = 0;
    if (ctx == "user") {
        troupe::cluster pool{1};
        troupe::thread t{pool, [&] { ns = body(); }};
        t.join();
    } else if (ctx == "os") {
        ns = body();
    } else {
        bench::fail("future_ready: --ctx must be os or user");
    }
    if (sum != iters + iters / 10 + 1) bench::fail("future_ready: wrong value");
    bench::result("future_ready", "troupe", "ns_per_op", ns, "op=" + which + " ctx=" + ctx);
}
