// CAF 0.17 twin of bench/savina/pingpong.cpp: N ping/pong round trips.
namespace savina_pingpong {

using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;

caf::behavior pong_actor(caf::event_based_actor*) {
    return {[](ping_atom) { return pong_atom::value; }};
}

struct ping_state {
    long left = 0;
};

caf::behavior ping_actor(caf::stateful_actor<ping_state>* self, caf::actor pong, long n,
                         long* out) {
    self->state.left = n;
    self->send(pong, ping_atom::value);
    return {[=](pong_atom) {
        ++*out;
        if (--self->state.left == 0) {
            self->send_exit(pong, caf::exit_reason::user_shutdown);
            self->quit();
            return;
        }
        self->send(pong, ping_atom::value);
    }};
}

SAVINA_BENCH(pingpong) {
    const long n = info.size("n", 1'000'000, 50'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    long pongs = 0;
    bench::stopwatch t;
    auto pong = system.spawn(pong_actor);
    system.spawn(ping_actor, pong, n, &pongs);
    pong = nullptr;
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(pongs)};
}

}  // namespace savina_pingpong
