// CAF 0.17 twin of bench/savina/threadring.cpp: a ring of A actors passes
// a token N hops, then an exit goes round.
namespace savina_threadring {

using next_atom = caf::atom_constant<caf::atom("next")>;
using token_atom = caf::atom_constant<caf::atom("token")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;

struct ring_state {
    caf::actor next;
};

caf::behavior ring_actor(caf::stateful_actor<ring_state>* self, long id, long* stopped_at) {
    return {[=](next_atom, caf::actor next) { self->state.next = std::move(next); },
            [=](token_atom, long hops) {
                if (hops == 0) {
                    *stopped_at = id;
                    self->send(self->state.next, exit_atom::value, id);
                    return;
                }
                self->send(self->state.next, token_atom::value, hops - 1);
            },
            [=](exit_atom, long origin) {
                if (origin != id) self->send(self->state.next, exit_atom::value, origin);
                self->state.next = nullptr;
                self->quit();
            }};
}

SAVINA_BENCH(threadring) {
    const long actors = info.size("actors", 100, 100);
    const long n = info.size("n", 1'000'000, 100'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    long stopped_at = -1;
    bench::stopwatch t;
    {
        std::vector<caf::actor> ring;
        for (long i = 0; i < actors; ++i) ring.push_back(system.spawn(ring_actor, i, &stopped_at));
        for (long i = 0; i < actors; ++i)
            caf::anon_send(ring[static_cast<std::size_t>(i)], next_atom::value,
                           ring[static_cast<std::size_t>((i + 1) % actors)]);
        caf::anon_send(ring[0], token_atom::value, n);
    }
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(stopped_at + n)};
}

}  // namespace savina_threadring
