// CAF 0.17 twin of bench/actors/dynamic_send.cpp: each receive spawns a new
// actor, sends it a new message and quits, N times. A long-lived actor
// stays alive during the run: CAF 0.17 wakes the thread waiting in
// await_all_actors_done() each time the running-actor count drops to one,
// so a chain of short-lived actors would pay a futex round trip per actor
// (about 3x the per-send cost on our machines). With it, this measures
// spawn + send.
#include "caf_common.hpp"

using chain_atom = caf::atom_constant<caf::atom("chain")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

namespace {
long Times = 0;

caf::behavior chain_actor(caf::event_based_actor* self, caf::actor keeper) {
    return {[=](chain_atom, long count) {
        if (count >= Times) {
            self->send(keeper, done_atom::value);
        } else {
            auto next = self->spawn(chain_actor, keeper);
            self->send(next, chain_atom::value, count + 1);
        }
        self->quit();
    }};
}

caf::behavior keeper_actor(caf::event_based_actor* self) {
    return {[=](done_atom) { self->quit(); }};
}
}  // namespace

int main(int argc, char** argv) {
    Times = bench::option(argc, argv, "n", 2'000'000);
    caf::actor_system_config cfg;
    caf_bench::configure(cfg, argc, argv);
    double s;
    {
        caf::actor_system system{cfg};
        auto keeper = system.spawn(keeper_actor);
        bench::stopwatch t;
        auto first = system.spawn(chain_actor, keeper);
        caf::anon_send(first, chain_atom::value, 1L);
        first = nullptr;
        keeper = nullptr;
        system.await_all_actors_done();
        s = t.seconds();
    }
    bench::result("actor_dynamic_send", "caf", "ns_per_op", s * 1e9 / static_cast<double>(Times),
                  caf_bench::params(argc, argv));
}
