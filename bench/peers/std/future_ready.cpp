// bench=future_ready, system=std: twin of bench/core/future_ready.cpp. A
// ready std::future's get() can be called once only, so the comparable
// standard construction is a value published under a std::mutex with a
// flag: --op=get locks, checks the flag, reads the value and unlocks;
// --op=available locks, reads the flag and unlocks. Reports ns_per_op.
#include <mutex>
#include <string>

#include "bench_util.hpp"

namespace {
struct published {
    std::mutex m;
    bool ready = false;
    long value = 0;
};
}  // namespace

int main(int argc, char** argv) {
    const bench::idle_thread multi_threaded;  // see bench_util.hpp: same path on both sides
    const long iters = bench::option(argc, argv, "iters", 50000000);
    const std::string which = bench::option_text(argc, argv, "op", "get");
    published p;
    {
        std::lock_guard g{p.m};
        p.ready = true;
        p.value = 1;
    }
    published* volatile pp = &p;
    long sum = 0;
    double ns = 0;
    if (which == "get") {
        ns = bench::ns_per_op(iters, [&] {
            published& q = *pp;
            std::lock_guard g{q.m};
            if (!q.ready) bench::fail("future_ready: not ready");
            sum += q.value;
        });
    } else if (which == "available") {
        ns = bench::ns_per_op(iters, [&] {
            published& q = *pp;
            std::lock_guard g{q.m};
            sum += q.ready;
        });
    } else {
        bench::fail("future_ready: --op must be get or available");
    }
    if (sum != iters + iters / 10 + 1) bench::fail("future_ready: wrong value");
    bench::result("future_ready", "std", "ns_per_op", ns, "op=" + which + " ctx=os");
}
