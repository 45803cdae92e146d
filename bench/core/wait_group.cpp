// bench=wait_group_*, system=troupe: troupe::wait_group.
//  --mode=uncontended: one thread, add(1); done(); wait() on a group nobody
//    else touches (ns per add+done+wait; Go's BenchmarkWaitGroupUncontended).
//    --ctx=os (main) or user (a user thread of a 1-processor cluster).
//  --mode=contended: --threads user threads on --processors processors each
//    do add(1); done() on one shared group, --iters times; the main thread
//    waits at the end (ns per add+done, wall time / all pairs; Go's
//    BenchmarkWaitGroupAddDone).
//  --mode=wake: --threads user threads block in wait() on a group at 1; a
//    driver user thread's done() releases them and waits for their done()s
//    on a second group (ns per round, --threads waiters woken each round).
// Twin: bench/peers/go/wait_group.go (sync.WaitGroup).
#include <troupe/cluster.hpp>
#include <troupe/latch.hpp>
#include <troupe/thread.hpp>
#include <troupe/wait_group.hpp>

#include <memory>
#include <vector>

#include "bench_util.hpp"
#include "on_context.hpp"

int main(int argc, char** argv) {
    const std::string mode = bench::option_text(argc, argv, "mode", "uncontended");
    const long iters = bench::option(argc, argv, "iters", 10000000);
    const long threads = bench::option(argc, argv, "threads", 4);
    const long procs = bench::option(argc, argv, "processors", 2);
    if (mode == "uncontended") {
        const bench::idle_thread multi_threaded;
        const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
        troupe::wait_group wg;
        const double ns = bench::on_context(ctx, "wait_group: --ctx must be os or user", [&] {
            return bench::ns_per_op(iters, [&] {
                wg.add(1);
                wg.done();
                wg.wait();
            });
        });
        if (wg.count() != 0) bench::fail("wait_group: counter not back at zero");
        bench::result("wait_group_uncontended", "troupe", "ns_per_op", ns, "ctx=" + ctx);
    } else if (mode == "contended") {
        troupe::cluster pool{std::size_t(procs)};
        troupe::wait_group wg;
        troupe::latch go{1};
        std::vector<troupe::thread> ts;
        for (long t = 0; t < threads; ++t)
            ts.emplace_back(pool, [&] {
                go.wait();
                for (long i = 0; i < iters; ++i) {
                    wg.add(1);
                    wg.done();
                }
            });
        const bench::stopwatch sw;
        go.count_down();
        ts.clear();
        wg.wait();
        const double s = sw.seconds();
        if (wg.count() != 0) bench::fail("wait_group: counter not back at zero");
        bench::result(
            "wait_group_contended", "troupe", "ns_per_op", s * 1e9 / double(iters * threads),
            "threads=" + std::to_string(threads) + " processors=" + std::to_string(procs));
    } else if (mode == "wake") {
        troupe::cluster pool{std::size_t(procs)};
        // Round r: the waiters wait on gate[r % 2] (at 1), then count down
        // done_ (a group main waits on), main re-arms the other gate.
        troupe::wait_group gate[2];
        troupe::wait_group finished;
        const long rounds = iters;
        gate[0].add(1);
        std::vector<troupe::thread> ts;
        for (long t = 0; t < threads; ++t)
            ts.emplace_back(pool, [&] {
                for (long r = 0; r < rounds; ++r) {
                    gate[r % 2].wait();
                    finished.done();
                }
            });
        // The driver is a user thread too (Go's is the main goroutine).
        double s = 0;
        troupe::thread driver{pool, [&] {
                                  const bench::stopwatch sw;
                                  for (long r = 0; r < rounds; ++r) {
                                      gate[(r + 1) % 2].add(1);
                                      finished.add(std::size_t(threads));
                                      gate[r % 2].done();  // releases the waiters of round r
                                      finished.wait();
                                  }
                                  s = sw.seconds();
                              }};
        driver.join();
        ts.clear();
        bench::result(
            "wait_group_wake", "troupe", "ns_per_op", s * 1e9 / double(rounds),
            "threads=" + std::to_string(threads) + " processors=" + std::to_string(procs));
    } else {
        bench::fail("wait_group: --mode must be uncontended, contended or wake");
    }
}
