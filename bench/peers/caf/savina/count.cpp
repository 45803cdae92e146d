// CAF 0.17 twin of bench/savina/count.cpp: N increments, then a request
// for the total.
namespace savina_count {

using inc_atom = caf::atom_constant<caf::atom("inc")>;
using get_atom = caf::atom_constant<caf::atom("get")>;

struct counter_state {
    long count = 0;
};

caf::behavior counter(caf::stateful_actor<counter_state>* self) {
    return {[=](inc_atom) { ++self->state.count; },
            [=](get_atom) {
                self->quit();
                return self->state.count;
            }};
}

caf::behavior producer(caf::event_based_actor* self, caf::actor target, long n, long* out) {
    for (long i = 0; i < n; ++i) self->send(target, inc_atom::value);
    self->request(target, caf::infinite, get_atom::value).then([=](long v) {
        *out = v;
        self->quit();
    });
    return {};
}

SAVINA_BENCH(count) {
    const long n = info.size("n", 2'500'000, 100'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    long result = 0;
    bench::stopwatch t;
    system.spawn(producer, system.spawn(counter), n, &result);
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(result)};
}

}  // namespace savina_count
