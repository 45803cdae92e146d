// Executor (Parsons, "Executor"): 40,000 actors in adjacent groups of 100;
// each receive sends the shared message to the next group member
// round-robin; every actor receives Set*Rounds+1 messages, then finishes.
// Prints seconds (and, with --rss=1, the peak resident memory).
#include <cstdio>
#include <memory>

#include "troupe_bench.hpp"

namespace {
long Set = 100, Rounds = 25;

struct shared_msg_t : troupe::message {};
shared_msg_t shared_msg;

struct d_actor : troupe::actor {
    d_actor* gstart = nullptr;
    long recs = 0, sends = 0, rounds = 0;
    troupe::allocation receive(shared_msg_t& m) {
        if (recs == rounds) return troupe::Finished;
        gstart[sends % Set] | m;
        ++sends;
        ++recs;
        return troupe::Nodelete;
    }
};
}  // namespace

int main(int argc, char** argv) {
    const long actors = bench::option(argc, argv, "actors", 40000);
    Set = bench::option(argc, argv, "set", 100);
    Rounds = bench::option(argc, argv, "rounds", 25);
    const bool rss = bench::option(argc, argv, "rss", 0) != 0;
    const troupe::actor_system_config cfg = bench::config(argc, argv);
    troupe::actor_system sys{cfg};
    std::unique_ptr<d_actor[]> a{new d_actor[static_cast<std::size_t>(actors)]};
    for (long i = 0; i < actors; ++i) {
        a[i].gstart = &a[i - i % Set];
        a[i].rounds = Set * Rounds;
    }
    bench::stopwatch t;
    for (long i = 0; i < actors; ++i) a[i] | shared_msg;
    sys.stop();
    const double s = t.seconds();
    const std::string p = bench::params(static_cast<long>(cfg.workers));
    bench::result("actor_executor", "troupe", "seconds", s, p);
    if (rss)
        bench::result("actor_executor_rss", "troupe", "max_rss_kb",
                      static_cast<double>(bench::max_rss_kb()), p);
    std::fprintf(stderr, "troupe executor: %.2f ns/message\n",
                 s * 1e9 / (static_cast<double>(actors) * static_cast<double>(Set * Rounds + 1)));
}
