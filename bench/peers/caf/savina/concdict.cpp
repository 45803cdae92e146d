// CAF 0.17 twin of bench/savina/concdict.cpp: W workers, M requests each
// (10% writes) to one dictionary actor, one at a time.
namespace savina_concdict {

using write_atom = caf::atom_constant<caf::atom("write")>;
using read_atom = caf::atom_constant<caf::atom("read")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

struct dict_state {
    std::unordered_map<long, long> map;
    long workers_left = 0;
};

caf::behavior dictionary(caf::stateful_actor<dict_state>* self, long workers, long* final_size) {
    self->state.workers_left = workers;
    return {[=](write_atom, long key, long value) {
                self->state.map[key] = value;
                return value;
            },
            [=](read_atom, long key) {
                auto& map = self->state.map;
                auto it = map.find(key);
                return it == map.end() ? 0L : it->second;
            },
            [=](done_atom) {
                if (--self->state.workers_left > 0) return;
                *final_size = static_cast<long>(self->state.map.size());
                self->quit();
            }};
}

struct worker_state {
    savina::lcg rng{0};
    long left = 0, replies = 0;
};

caf::behavior worker(caf::stateful_actor<worker_state>* self, caf::actor dict, long id, long m,
                     std::atomic<long>* replies) {
    self->state.rng = savina::lcg{static_cast<std::uint64_t>(id + 1)};
    self->state.left = m;
    auto next = [=] {
        auto& rng = self->state.rng;
        const bool write = rng.below(100) < 10;
        const long key = rng.below(10'000);
        if (write) self->send(dict, write_atom::value, key, key * 3);
        else self->send(dict, read_atom::value, key);
    };
    next();
    return {[=](long) {
        ++self->state.replies;
        if (--self->state.left > 0) {
            next();
            return;
        }
        replies->fetch_add(self->state.replies);
        self->send(dict, done_atom::value);
        self->quit();
    }};
}

SAVINA_BENCH(concdict) {
    const long workers = info.size("workers_n", 20, 20);
    const long m = info.size("m", 20'000, 1'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    long final_size = 0;
    std::atomic<long> replies{0};
    bench::stopwatch t;
    {
        auto dict = system.spawn(dictionary, workers, &final_size);
        for (long i = 0; i < workers; ++i) system.spawn(worker, dict, i, m, &replies);
    }
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(replies.load()) * 1'000'003 +
                             static_cast<std::uint64_t>(final_size)};
}

}  // namespace savina_concdict
