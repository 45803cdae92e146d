// Monitor churn beside CAF (bench/peers/caf/monitor_churn.cpp): one actor
// spawns N actors from its behaviour, monitors each and tells it to finish;
// it counts the downs until all N came back. Prints ns per actor (spawn,
// monitor, finish, down) and the peak resident memory.
#include <atomic>

#include "troupe_bench.hpp"

namespace {
struct go : troupe::message {};
struct quit : troupe::message {};

struct mortal : troupe::actor {
    troupe::allocation receive(quit&) { return troupe::Delete; }
};

struct boss : troupe::actor {
    long n = 0, downs = 0;
    quit q;
    troupe::future<void> done;
    void receive(go&) {
        for (long i = 0; i < n; ++i) {
            auto* a = new mortal;
            troupe::monitor(*this, *a);
            *a | q;
        }
    }
    troupe::allocation receive(troupe::down&) {
        if (++downs < n) return troupe::Nodelete;
        done.fulfil();
        return troupe::Finished;
    }
};
}  // namespace

int main(int argc, char** argv) {
    const long n = bench::option(argc, argv, "n", 1'000'000);
    const troupe::actor_system_config cfg = bench::config(argc, argv);
    troupe::actor_system sys{cfg};
    boss b;
    b.n = n;
    go g;
    bench::stopwatch t;
    b | g;
    b.done.get();
    const double s = t.seconds();
    sys.stop();
    const std::string params =
        bench::params(static_cast<long>(cfg.workers), "n=" + std::to_string(n));
    bench::result("actor_monitor_churn", "troupe", "ns_per_op", s * 1e9 / double(n), params);
    bench::result("actor_monitor_churn", "troupe", "max_rss_kb", double(bench::max_rss_kb()),
                  params);
}
