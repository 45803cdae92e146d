// CAF 0.17 twin of bench/remote/ping_pong.cpp: an actor in each of two
// processes bounces a message through the middleman (TCP over loopback);
// time per round trip. Run: remote_caf_ping_pong --n=N
#include "remote_common.hpp"

using ping_atom = caf::atom_constant<caf::atom("ping")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

int main(int argc, char** argv) {
    const long n = bench::option(argc, argv, "n", 100000);
    return caf_remote::run(
        argc, argv,
        [](caf::actor_system& sys) {
            return sys.spawn([](caf::event_based_actor* self) -> caf::behavior {
                return {[=](ping_atom, long v) {
                    self->send(caf::actor_cast<caf::actor>(self->current_sender()),
                               ping_atom::value, v + 1);
                }};
            });
        },
        [n](caf::actor_system& sys, caf::actor server) {
            caf::scoped_actor self{sys};
            auto main_handle = caf::actor_cast<caf::actor>(self);
            auto client = sys.spawn([=](caf::event_based_actor* me) -> caf::behavior {
                return {[=](ping_atom, long v) {
                    if (v >= n) {
                        me->send(main_handle, done_atom::value);
                        me->quit();
                    } else {
                        me->send(server, ping_atom::value, v);
                    }
                }};
            });
            const auto t0 = bench::clock::now();
            self->send(client, ping_atom::value, 0L);
            self->receive([](done_atom) {});
            const double s = bench::seconds(t0, bench::clock::now());
            bench::result("remote_ping_pong", "caf", "ns_per_op", s * 1e9 / double(n), "ranks=2");
        });
}
