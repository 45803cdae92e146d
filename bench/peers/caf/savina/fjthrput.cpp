// CAF 0.17 twin of bench/savina/fjthrput.cpp: A actors, N messages each.
namespace savina_fjthrput {

using work_atom = caf::atom_constant<caf::atom("work")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

struct worker_state {
    long processed = 0;
    double sink = 0;
};

caf::behavior worker(caf::stateful_actor<worker_state>* self, std::atomic<long>* total) {
    return {[=](work_atom) {
                auto& st = self->state;
                const double s = std::sin(37.2 + static_cast<double>(st.processed));
                st.sink += s * s;
                ++st.processed;
            },
            [=](done_atom) {
                total->fetch_add(self->state.processed + (self->state.sink < 0 ? 1 : 0));
                self->quit();
            }};
}

SAVINA_BENCH(fjthrput) {
    const long actors = info.size("actors", 60, 60);
    const long n = info.size("n", 20'000, 2'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::atomic<long> total{0};
    bench::stopwatch t;
    {
        std::vector<caf::actor> workers;
        for (long i = 0; i < actors; ++i) workers.push_back(system.spawn(worker, &total));
        for (long i = 0; i < n; ++i)
            for (auto& a : workers) caf::anon_send(a, work_atom::value);
        for (auto& a : workers) caf::anon_send(a, done_atom::value);
    }
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(total.load())};
}

}  // namespace savina_fjthrput
