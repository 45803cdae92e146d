// CAF 0.17 twin of bench/actors/executor.cpp: 40,000 actors in groups of
// 100; each receive sends one message to the next group member round-robin;
// every actor receives Set*Rounds+1 messages, then quits.
#include <cstdio>
#include <vector>

#include "caf_common.hpp"

using msg_atom = caf::atom_constant<caf::atom("msg")>;

namespace {
long Set = 100, Rounds = 25;
std::vector<caf::actor> all;  // filled before the first message, read-only afterwards

caf::behavior d_actor(caf::event_based_actor* self, long id) {
    const long gstart = id - id % Set, rounds = Set * Rounds;
    auto recs = std::make_shared<long>(0), sends = std::make_shared<long>(0);
    return {[=](msg_atom) {
        if (*recs == rounds) {
            self->quit();
            return;
        }
        self->send(all[static_cast<std::size_t>(gstart + *sends % Set)], msg_atom::value);
        ++*sends;
        ++*recs;
    }};
}
}  // namespace

int main(int argc, char** argv) {
    const long actors = bench::option(argc, argv, "actors", 40000);
    Set = bench::option(argc, argv, "set", 100);
    Rounds = bench::option(argc, argv, "rounds", 25);
    const bool rss = bench::option(argc, argv, "rss", 0) != 0;
    caf::actor_system_config cfg;
    caf_bench::configure(cfg, argc, argv);
    double s;
    {
        caf::actor_system system{cfg};
        all.reserve(static_cast<std::size_t>(actors));
        for (long i = 0; i < actors; ++i) all.push_back(system.spawn(d_actor, i));
        bench::stopwatch t;
        {
            caf::scoped_actor main_actor{system};
            for (auto& a : all) main_actor->send(a, msg_atom::value);
        }
        // The handles stay valid (quitting does not need them dropped), as
        // the troupe side keeps its actor array.
        system.await_all_actors_done();
        s = t.seconds();
        all.clear();
    }
    const std::string p = caf_bench::params(argc, argv);
    bench::result("actor_executor", "caf", "seconds", s, p);
    if (rss)
        bench::result("actor_executor_rss", "caf", "max_rss_kb",
                      static_cast<double>(bench::max_rss_kb()), p);
    std::fprintf(stderr, "caf executor: %.2f ns/message\n",
                 s * 1e9 / (static_cast<double>(actors) * static_cast<double>(Set * Rounds + 1)));
}
