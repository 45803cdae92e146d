// CAF 0.17 twin of bench/remote/throughput.cpp: S sender actors stream
// small messages one way to a sink in the other process (middleman, TCP over
// loopback), which acknowledges the last. Run: remote_caf_throughput --n=N --senders=S
#include <vector>

#include "remote_common.hpp"

using item_atom = caf::atom_constant<caf::atom("item")>;
using hello_atom = caf::atom_constant<caf::atom("hello")>;
using ack_atom = caf::atom_constant<caf::atom("ack")>;

int main(int argc, char** argv) {
    const long senders = bench::option(argc, argv, "senders", 1);
    const long n = bench::option(argc, argv, "n", 1000000) / senders * senders;
    return caf_remote::run(
        argc, argv,
        [](caf::actor_system& sys) {
            return sys.spawn([](caf::stateful_actor<std::pair<long, long>>* self) -> caf::behavior {
                // state: (expected, count); the hello's sender gets the ack
                static caf::actor waiter;
                return {[=](hello_atom, long expected) {
                            self->state.first = expected;
                            self->state.second = 0;
                            waiter = caf::actor_cast<caf::actor>(self->current_sender());
                            return hello_atom::value;
                        },
                        [=](item_atom, long) {
                            if (++self->state.second == self->state.first)
                                self->send(waiter, ack_atom::value, self->state.second);
                        }};
            });
        },
        [n, senders](caf::actor_system& sys, caf::actor sink) {
            caf::scoped_actor self{sys};
            self->request(sink, caf::infinite, hello_atom::value, n)
                .receive([](hello_atom) {}, [](caf::error&) { bench::fail("caf hello failed"); });
            const auto t0 = bench::clock::now();
            for (long s = 0; s < senders; ++s)
                sys.spawn([=](caf::event_based_actor* me) {
                    for (long k = 0; k < n / senders; ++k) me->send(sink, item_atom::value, k);
                });
            long got = 0;
            self->receive([&](ack_atom, long c) { got = c; });
            const double s = bench::seconds(t0, bench::clock::now());
            if (got != n) bench::fail("lost messages");
            bench::result("remote_throughput", "caf", "ops_per_s", double(n) / s,
                          ("senders=" + std::to_string(senders)).c_str());
        });
}
