// CAF 0.17 twin of bench/actors/monitor_churn.cpp: one actor spawns N
// actors, monitors each and tells it to quit; it counts the down messages
// until all N came back. Prints ns per actor and the peak resident memory.
#include "caf_common.hpp"

using go_atom = caf::atom_constant<caf::atom("go")>;
using quit_atom = caf::atom_constant<caf::atom("quit")>;

namespace {
caf::behavior mortal(caf::event_based_actor* self) {
    return {[=](quit_atom) { self->quit(); }};
}

caf::behavior boss(caf::event_based_actor* self, long n) {
    auto downs = std::make_shared<long>(0);
    self->set_down_handler([=](const caf::down_msg&) {
        if (++*downs == n) self->quit();
    });
    return {[=](go_atom) {
        for (long i = 0; i < n; ++i) {
            auto a = self->spawn(mortal);
            self->monitor(a);
            self->send(a, quit_atom::value);
        }
    }};
}
}  // namespace

int main(int argc, char** argv) {
    const long n = bench::option(argc, argv, "n", 1'000'000);
    caf::actor_system_config cfg;
    caf_bench::configure(cfg, argc, argv);
    double s;
    {
        caf::actor_system system{cfg};
        bench::stopwatch t;
        auto b = system.spawn(boss, n);
        caf::anon_send(b, go_atom::value);
        b = nullptr;
        system.await_all_actors_done();
        s = t.seconds();
    }
    const std::string params = caf_bench::params(argc, argv) + " n=" + std::to_string(n);
    bench::result("actor_monitor_churn", "caf", "ns_per_op", s * 1e9 / double(n), params);
    bench::result("actor_monitor_churn", "caf", "max_rss_kb", double(bench::max_rss_kb()), params);
}
