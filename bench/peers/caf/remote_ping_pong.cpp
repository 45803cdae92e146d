// CAF 0.17 twin of bench/remote/ping_pong.cpp: an actor in each of two
// processes bounces a message through the middleman (TCP over loopback);
// time per round trip. Then a scoped actor requests the remote actor `asks`
// times, one at a time (request(...).receive: remote_ask, _p50, _p99).
// Run: remote_caf_ping_pong --n=N [--asks=M] (M defaults to N/5)
#include <algorithm>
#include <vector>

#include "remote_common.hpp"

using ping_atom = caf::atom_constant<caf::atom("ping")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using ask_atom = caf::atom_constant<caf::atom("ask")>;

int main(int argc, char** argv) {
    const long n = bench::option(argc, argv, "n", 100000);
    return caf_remote::run(
        argc, argv,
        [](caf::actor_system& sys) {
            return sys.spawn([](caf::event_based_actor* self) -> caf::behavior {
                return {[=](ping_atom, long v) {
                            self->send(caf::actor_cast<caf::actor>(self->current_sender()),
                                       ping_atom::value, v + 1);
                        },
                        [](ask_atom, long v) { return v + 1; }};
            });
        },
        [n, asks = bench::option(argc, argv, "asks", std::max(n / 5, 1000L))](
            caf::actor_system& sys, caf::actor server) {
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
            std::vector<double> ns(static_cast<std::size_t>(asks));
            for (long i = 0; i < asks; ++i) {
                long r = 0;
                const auto a0 = bench::clock::now();
                self->request(server, caf::infinite, ask_atom::value, i)
                    .receive([&](long v) { r = v; },
                             [](caf::error&) { bench::fail("caf request failed"); });
                ns[static_cast<std::size_t>(i)] = bench::seconds(a0, bench::clock::now()) * 1e9;
                if (r != i + 1) bench::fail("wrong reply");
            }
            bench::latency_results("remote_ask", "caf", ns, "ranks=2");
        });
}
