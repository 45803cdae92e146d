// CAF 0.17 twin of bench/savina/big.cpp: A actors, N pings each to random
// neighbours, one at a time; a sink stops everyone at the end.
namespace savina_big {

using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using peers_atom = caf::atom_constant<caf::atom("peers")>;

struct big_state {
    std::vector<caf::actor> all;
    caf::actor sink;
    savina::lcg rng{0};
    long left = 0, pongs = 0;
};

caf::behavior big_actor(caf::stateful_actor<big_state>* self, long id, long n,
                        std::atomic<long>* pongs) {
    self->state.rng = savina::lcg{static_cast<std::uint64_t>(id)};
    self->state.left = n;
    auto send_ping = [=] {
        auto& st = self->state;
        self->send(st.all[static_cast<std::size_t>(st.rng.below(static_cast<long>(st.all.size())))],
                   ping_atom::value);
    };
    return {[=](peers_atom, std::vector<caf::actor>& all, caf::actor& sink) {
                self->state.all = std::move(all);
                self->state.sink = std::move(sink);
                send_ping();
            },
            [=](ping_atom) { return pong_atom::value; },
            [=](pong_atom) {
                ++self->state.pongs;
                if (--self->state.left == 0) self->send(self->state.sink, done_atom::value);
                else send_ping();
            },
            [=](savina::stop_atom) {
                pongs->fetch_add(self->state.pongs);
                self->state.all.clear();
                self->state.sink = nullptr;
                self->quit();
            }};
}

struct sink_state {
    std::vector<caf::actor> all;
    long left = 0;
};

caf::behavior sink_actor(caf::stateful_actor<sink_state>* self) {
    return {[=](peers_atom, std::vector<caf::actor>& all) {
                self->state.left = static_cast<long>(all.size());
                self->state.all = std::move(all);
            },
            [=](done_atom) {
                if (--self->state.left > 0) return;
                for (auto& a : self->state.all) self->send(a, savina::stop_atom::value);
                self->state.all.clear();
                self->quit();
            }};
}

SAVINA_BENCH(big) {
    const long actors = info.size("actors", 120, 40);
    const long n = info.size("n", 8'000, 1'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::atomic<long> pongs{0};
    bench::stopwatch t;
    {
        std::vector<caf::actor> all;
        for (long i = 0; i < actors; ++i) all.push_back(system.spawn(big_actor, i, n, &pongs));
        auto sink = system.spawn(sink_actor);
        caf::anon_send(sink, peers_atom::value, all);
        for (auto& a : all) caf::anon_send(a, peers_atom::value, all, sink);
    }
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(pongs.load())};
}

}  // namespace savina_big
