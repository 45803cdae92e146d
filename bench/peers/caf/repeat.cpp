// CAF 0.17 twin of bench/actors/repeat.cpp: one client scatters two
// messages to each of 100,000 servers, each server replies, and the client
// starts the next round when all replies are in. Prints seconds.
#include <cstdio>
#include <vector>

#include "caf_common.hpp"

using int_atom = caf::atom_constant<caf::atom("int")>;
using char_atom = caf::atom_constant<caf::atom("char")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;

namespace {
long Servers = 100000, Rounds = 20;

caf::behavior server(caf::event_based_actor* self) {
    return {
        [=](int_atom, int, const caf::actor& client) {
            self->send(client, int_atom::value, 7, client);
        },
        [=](char_atom, char, const caf::actor& client) {
            self->send(client, char_atom::value, 'x', client);
        },
        [=](stop_atom) { self->quit(); },
    };
}

struct client_state {
    std::vector<caf::actor> servers;
    long results = 0, rounds = 0;
};

caf::behavior client(caf::stateful_actor<client_state>* self, std::vector<caf::actor> servers) {
    self->state.servers = std::move(servers);
    auto scatter = [self] {
        caf::actor me = caf::actor_cast<caf::actor>(self);
        for (auto& s : self->state.servers) {
            self->send(s, int_atom::value, 0, me);
            self->send(s, char_atom::value, 'a', me);
        }
    };
    auto gathered = [self, scatter] {
        auto& st = self->state;
        if (++st.results < 2 * Servers) return;
        st.results = 0;
        if (++st.rounds == Rounds) {
            for (auto& s : st.servers) self->send(s, stop_atom::value);
            self->quit();
            return;
        }
        scatter();
    };
    return {
        [=](start_atom) { scatter(); },
        [=](int_atom, int, const caf::actor&) { gathered(); },
        [=](char_atom, char, const caf::actor&) { gathered(); },
    };
}
}  // namespace

int main(int argc, char** argv) {
    Servers = bench::option(argc, argv, "servers", 100000);
    Rounds = bench::option(argc, argv, "rounds", 20);
    caf::actor_system_config cfg;
    caf_bench::configure(cfg, argc, argv);
    double s;
    {
        caf::actor_system system{cfg};
        std::vector<caf::actor> servers;
        servers.reserve(static_cast<std::size_t>(Servers));
        for (long i = 0; i < Servers; ++i) servers.push_back(system.spawn(server));
        auto c = system.spawn(client, servers);
        servers.clear();
        bench::stopwatch t;
        caf::anon_send(c, start_atom::value);
        c = nullptr;
        system.await_all_actors_done();
        s = t.seconds();
    }
    bench::result("actor_repeat", "caf", "seconds", s, caf_bench::params(argc, argv));
    std::fprintf(stderr, "caf repeat: %.2f ns/message\n",
                 s * 1e9 / (4.0 * static_cast<double>(Servers) * static_cast<double>(Rounds)));
}
