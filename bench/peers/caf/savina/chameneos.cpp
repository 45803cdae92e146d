// CAF 0.17 twin of bench/savina/chameneos.cpp: C chameneos, a mall, N
// meetings.
namespace savina_chameneos {

using meet_req_atom = caf::atom_constant<caf::atom("meetreq")>;
using meet_atom = caf::atom_constant<caf::atom("meet")>;
using change_atom = caf::atom_constant<caf::atom("change")>;
using start_atom = caf::atom_constant<caf::atom("start")>;

inline int complement(int a, int b) { return a == b ? a : 3 - a - b; }

struct mall_state {
    long meetings_left = 0, exits_left = 0;
    caf::actor waiting;
    int waiting_colour = 0;
};

caf::behavior mall(caf::stateful_actor<mall_state>* self, long n, long count) {
    self->state.meetings_left = n;
    self->state.exits_left = count;
    return {[=](meet_req_atom, caf::actor& from, int c) {
        auto& st = self->state;
        if (st.meetings_left == 0) {
            self->send(from, savina::stop_atom::value);
            if (--st.exits_left == 0) self->quit();
            return;
        }
        if (!st.waiting) {
            st.waiting = std::move(from);
            st.waiting_colour = c;
            return;
        }
        --st.meetings_left;
        self->send(st.waiting, meet_atom::value, from, c);
        st.waiting = nullptr;
    }};
}

struct chameneo_state {
    caf::actor mall;
    int c = 0;
    long meetings = 0;
};

caf::behavior chameneo(caf::stateful_actor<chameneo_state>* self, caf::actor the_mall, int c,
                       std::atomic<long>* total) {
    self->state.mall = the_mall;
    self->state.c = c;
    auto ask = [=] {
        self->send(self->state.mall, meet_req_atom::value, caf::actor_cast<caf::actor>(self),
                   self->state.c);
    };
    ask();
    return {[=](meet_atom, const caf::actor& other, int k) {
                self->state.c = complement(self->state.c, k);
                ++self->state.meetings;
                self->send(other, change_atom::value, self->state.c);
                ask();
            },
            [=](change_atom, int k) {
                self->state.c = k;
                ++self->state.meetings;
                ask();
            },
            [=](savina::stop_atom) {
                total->fetch_add(self->state.meetings);
                self->state.mall = nullptr;
                self->quit();
            }};
}

SAVINA_BENCH(chameneos) {
    const long count = info.size("chameneos", 100, 100);
    const long n = info.size("n", 400'000, 20'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::atomic<long> total{0};
    bench::stopwatch t;
    {
        auto m = system.spawn(mall, n, count);
        for (long i = 0; i < count; ++i) system.spawn(chameneo, m, static_cast<int>(i % 3), &total);
    }
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(total.load())};
}

}  // namespace savina_chameneos
