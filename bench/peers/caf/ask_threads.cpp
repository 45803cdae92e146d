// CAF 0.17 twin of bench/actors/ask_threads.cpp: 4 plain OS threads, each
// with a scoped_actor, request a deposit from one account actor --asks
// times and wait for each answer.
#include <thread>
#include <vector>

#include "caf_common.hpp"

using deposit_atom = caf::atom_constant<caf::atom("deposit")>;

namespace {
caf::behavior account(caf::event_based_actor*) {
    auto total = std::make_shared<long>(0);
    return {[=](deposit_atom, long n) {
        *total += n;
        return *total;
    }};
}
}  // namespace

int main(int argc, char** argv) {
    const long asks = bench::option(argc, argv, "asks", 2000);
    const long threads = bench::option(argc, argv, "threads", 4);
    caf::actor_system_config cfg;
    caf_bench::configure(cfg, argc, argv);
    double s;
    long last = 0;
    {
        caf::actor_system system{cfg};
        auto acc = system.spawn(account);
        bench::stopwatch t;
        {
            std::vector<std::thread> ts;
            for (long i = 0; i < threads; ++i)
                ts.emplace_back([&] {
                    caf::scoped_actor self{system};
                    for (long k = 0; k < asks; ++k)
                        self->request(acc, caf::infinite, deposit_atom::value, 1L)
                            .receive([&](long) {}, [&](caf::error&) { std::abort(); });
                });
            for (auto& th : ts) th.join();
        }
        s = t.seconds();
        caf::scoped_actor self{system};
        self->request(acc, caf::infinite, deposit_atom::value, 0L)
            .receive([&](long v) { last = v; }, [&](caf::error&) {});
        if (last != asks * threads) {
            std::fprintf(stderr, "caf ask_threads: lost deposits\n");
            return 1;
        }
        self->send_exit(acc, caf::exit_reason::user_shutdown);
    }
    bench::result("ask_threads", "caf", "seconds", s, caf_bench::params(argc, argv));
}
