// CAF 0.17 twin of bench/actors/static_send.cpp: one actor re-sends the
// same message to itself N times. Prints ns per send.
#include "caf_common.hpp"

using ping_atom = caf::atom_constant<caf::atom("ping")>;

namespace {
caf::behavior self_sender(caf::event_based_actor* self, long times) {
    auto count = std::make_shared<long>(0);
    return {[=](ping_atom) {
        if (++*count == times) {
            self->quit();
            return;
        }
        self->send(self, ping_atom::value);
    }};
}
}  // namespace

int main(int argc, char** argv) {
    const long n = bench::option(argc, argv, "n", 10'000'000);
    caf::actor_system_config cfg;
    caf_bench::configure(cfg, argc, argv);
    double s;
    {
        caf::actor_system system{cfg};
        auto a = system.spawn(self_sender, n);
        bench::stopwatch t;
        caf::anon_send(a, ping_atom::value);
        a = nullptr;
        system.await_all_actors_done();
        s = t.seconds();
    }
    bench::result("actor_static_send", "caf", "ns_per_op", s * 1e9 / static_cast<double>(n),
                  caf_bench::params(argc, argv));
}
