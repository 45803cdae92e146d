// bench=worker_pool, system=troupe: a Go-style worker pool. A feeder user
// thread sends --jobs ints into `jobs`; 4 worker user threads square each
// and send it to `results`; the consumer (--consumer=os: the main OS thread,
// --consumer=os_lend: the main OS thread lending its kernel thread to the
// pool while it waits, troupe::lend_while_blocked; --consumer=user: a user
// thread) receives them all. Channels of capacity
// 100 (as in the usual Go example). Reports seconds for the whole run.
//
// Twin: bench/peers/go/worker_pool.go.
#include <string>
#include <vector>

#include <troupe/channel.hpp>
#include <troupe/cluster.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const long jobs = bench::option(argc, argv, "jobs", 100000);
    const long workers = bench::option(argc, argv, "workers", 4);
    const long procs = bench::option(argc, argv, "processors", 2);
    const std::string consumer = bench::option_text(argc, argv, "consumer", "os");

    troupe::cluster pool{static_cast<std::size_t>(procs)};
    troupe::channel<long> in{100, "jobs"}, out{100, "results"};
    long sum = 0;
    const auto t0 = bench::clock::now();
    {
        troupe::thread feeder{pool, [&] {
                                  for (long j = 0; j < jobs; ++j) in.insert(j);
                                  in.close();
                              }};
        std::vector<troupe::thread> ws;
        for (long w = 0; w < workers; ++w)
            ws.emplace_back(pool, [&] {
                for (long j : in) out.insert(j * j % 1000);
            });
        auto consume = [&] {
            for (long k = 0; k < jobs; ++k) sum += out.remove();
        };
        if (consumer == "user") {
            troupe::thread c{pool, consume};
        } else if (consumer == "os_lend") {
            troupe::lend_while_blocked l{pool};
            consume();
        } else {
            consume();
        }
    }
    const auto t1 = bench::clock::now();
    long expect = 0;
    for (long j = 0; j < jobs; ++j) expect += j * j % 1000;
    if (sum != expect) bench::fail("worker_pool: wrong sum");
    bench::result("worker_pool", "troupe", "seconds", bench::seconds(t0, t1),
                  "consumer=" + consumer);
}
