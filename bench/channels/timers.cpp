// bench=timer_create / ticker_create / timer_pending_*, system=troupe:
// timer channels (troupe/timer_channel.hpp).
//  --mode=create --kind=timer|ticker: make a timer (after(1h)) or a
//    ticker(1h) and stop it, --iters times on one OS thread (ns per
//    create+stop; the creation rate of Go's time.NewTimer/NewTicker+Stop).
//  --mode=pending: --count timers of 1h made and kept pending (one heap
//    object each, like Go's []*time.Timer), then all stopped:
//    timer_pending_create (ns per creation while the heap grows) and
//    timer_pending_bytes (heap bytes in use per pending timer, mallinfo2
//    before and after, metric bytes_per_op).
// Twin: bench/peers/go/timers.go.
#include <malloc.h>

#include <troupe/timer_channel.hpp>

#include <chrono>
#include <memory>
#include <vector>

#include "bench_util.hpp"

using namespace std::chrono_literals;

int main(int argc, char** argv) {
    const std::string mode = bench::option_text(argc, argv, "mode", "create");
    const std::string kind = bench::option_text(argc, argv, "kind", "timer");
    const long iters = bench::option(argc, argv, "iters", 2000000);
    const long count = bench::option(argc, argv, "count", 1000000);
    {
        troupe::timer warm{1h};  // start the timer service outside the clock
    }
    if (mode == "create") {
        double ns = 0;
        if (kind == "timer") {
            ns = bench::ns_per_op(iters, [] {
                auto t = troupe::after(1h);
                if (!t.stop()) bench::fail("timer fired early");
            });
        } else {
            ns = bench::ns_per_op(iters, [] {
                troupe::ticker t{1h};
                t.stop();
            });
        }
        bench::result(kind == "timer" ? "timer_create" : "ticker_create", "troupe", "ns_per_op",
                      ns);
    } else if (mode == "pending") {
        std::vector<std::unique_ptr<troupe::timer>> ts;
        ts.reserve(std::size_t(count));  // the vector is the program's, not the timers'
        const auto before = mallinfo2().uordblks;
        const bench::stopwatch sw;
        for (long i = 0; i < count; ++i) ts.push_back(std::make_unique<troupe::timer>(1h));
        const double s = sw.seconds();
        const auto after = mallinfo2().uordblks;
        for (auto& t : ts)
            if (!t->stop()) bench::fail("timer fired early");
        bench::result("timer_pending_create", "troupe", "ns_per_op", s * 1e9 / double(count),
                      "count=" + std::to_string(count));
        bench::result("timer_pending_bytes", "troupe", "bytes_per_op",
                      double(after - before) / double(count), "count=" + std::to_string(count));
    } else {
        bench::fail("timers: --mode must be create or pending");
    }
}
