// bench=ask_threads, system=troupe: 4 plain OS threads each ask one account
// actor --asks times (a deposit request answered with the new total) and
// wait for every answer before the next ask. Reports seconds for all asks.
//
// Twin: bench/peers/caf/ask_threads.cpp.
#include <thread>
#include <vector>

#include "troupe_bench.hpp"

namespace {
struct deposit : troupe::request<long> {
    long n = 1;
};
struct account : troupe::actor {
    long total = 0;
    troupe::allocation receive(deposit& d) {
        total += d.n;
        d.reply(total);
        return troupe::Nodelete;
    }
};
}  // namespace

int main(int argc, char** argv) {
    const long asks = bench::option(argc, argv, "asks", 2000);
    const long threads = bench::option(argc, argv, "threads", 4);
    double s;
    {
        troupe::actor_system sys{bench::config(argc, argv)};
        account acc;
        bench::stopwatch t;
        {
            std::vector<std::thread> ts;
            for (long i = 0; i < threads; ++i)
                ts.emplace_back([&] {
                    for (long k = 0; k < asks; ++k) {
                        deposit d;
                        (void)troupe::ask(acc, d).get();
                    }
                });
            for (auto& th : ts) th.join();
        }
        s = t.seconds();
        if (acc.total != asks * threads) {
            std::fprintf(stderr, "ask_threads: lost deposits\n");
            return 1;
        }
        acc | troupe::finished_msg;
        sys.stop();
    }
    bench::result("ask_threads", "troupe", "seconds", s,
                  bench::params(bench::option(argc, argv, "workers", 1)));
}
