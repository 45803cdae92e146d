// CAF 0.17 twin of bench/savina/philosopher.cpp: N philosophers, M meals
// each, one arbitrator holding the forks.
namespace savina_philosopher {

using hungry_atom = caf::atom_constant<caf::atom("hungry")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using eat_atom = caf::atom_constant<caf::atom("eat")>;
using denied_atom = caf::atom_constant<caf::atom("denied")>;
using leaving_atom = caf::atom_constant<caf::atom("leaving")>;

struct arbitrator_state {
    std::vector<char> forks;
    long seated = 0;
};

caf::behavior arbitrator(caf::stateful_actor<arbitrator_state>* self, long n) {
    self->state.forks.assign(static_cast<std::size_t>(n), 0);
    self->state.seated = n;
    return {[=](hungry_atom, long id) {
                auto& forks = self->state.forks;
                char& left = forks[static_cast<std::size_t>(id)];
                char& right = forks[static_cast<std::size_t>((id + 1) % n)];
                if (left || right) return caf::make_message(denied_atom::value);
                left = right = 1;
                return caf::make_message(eat_atom::value);
            },
            [=](done_atom, long id) {
                auto& forks = self->state.forks;
                forks[static_cast<std::size_t>(id)] = 0;
                forks[static_cast<std::size_t>((id + 1) % n)] = 0;
            },
            [=](leaving_atom) {
                if (--self->state.seated == 0) self->quit();
            }};
}

struct philosopher_state {
    long meals = 0, denials = 0;
};

caf::behavior philosopher(caf::stateful_actor<philosopher_state>* self, caf::actor arb, long id,
                          long rounds, std::atomic<long>* meals) {
    self->send(arb, hungry_atom::value, id);
    return {[=](eat_atom) {
                auto& st = self->state;
                ++st.meals;
                self->send(arb, done_atom::value, id);
                if (st.meals == rounds) {
                    self->send(arb, leaving_atom::value);
                    meals->fetch_add(st.meals);
                    self->quit();
                    return;
                }
                self->send(arb, hungry_atom::value, id);
            },
            [=](denied_atom) {
                ++self->state.denials;
                self->send(arb, hungry_atom::value, id);
            }};
}

SAVINA_BENCH(philosopher) {
    const long n = info.size("philosophers", 20, 20);
    const long rounds = info.size("rounds", 25'000, 2'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::atomic<long> meals{0};
    bench::stopwatch t;
    {
        auto arb = system.spawn(arbitrator, n);
        for (long i = 0; i < n; ++i) system.spawn(philosopher, arb, i, rounds, &meals);
    }
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(meals.load())};
}

}  // namespace savina_philosopher
