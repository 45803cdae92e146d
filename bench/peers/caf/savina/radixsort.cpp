// CAF 0.17 twin of bench/savina/radixsort.cpp: a source, B sort stages (one
// per bit), a validator; one message per value per hop.
namespace savina_radixsort {

struct validator_state {
    long seen = 0, previous = -1;
    bool sorted = true;
    std::uint64_t checksum = 0;
};

caf::behavior validator(caf::stateful_actor<validator_state>* self, long expected,
                        std::uint64_t* checksum, bool* sorted) {
    return {[=](long v) {
        auto& st = self->state;
        if (v < st.previous) st.sorted = false;
        st.previous = v;
        st.checksum = savina::mix(st.checksum, static_cast<std::uint64_t>(v));
        if (++st.seen == expected) {
            *checksum = st.checksum;
            *sorted = st.sorted;
            self->quit();
        }
    }};
}

struct stage_state {
    long seen = 0;
    std::vector<long> ones;
};

caf::behavior sort_stage(caf::stateful_actor<stage_state>* self, caf::actor next, long bit,
                         long expected) {
    return {[=](long v) {
        auto& st = self->state;
        if ((v & bit) == 0) self->send(next, v);
        else st.ones.push_back(v);
        if (++st.seen < expected) return;
        for (long x : st.ones) self->send(next, x);
        self->quit();
    }};
}

caf::behavior source(caf::event_based_actor* self, caf::actor first, long n, long bits) {
    savina::lcg rng{7};
    for (long i = 0; i < n; ++i) self->send(first, rng.below(1L << bits));
    self->quit();
    return {};
}

SAVINA_BENCH(radixsort) {
    const long n = info.size("n", 100'000, 10'000);
    const long bits = info.size("bits", 16, 16);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::uint64_t checksum = 0;
    bool sorted = false;
    bench::stopwatch t;
    {
        caf::actor next = system.spawn(validator, n, &checksum, &sorted);
        for (long b = bits - 1; b >= 0; --b) next = system.spawn(sort_stage, next, 1L << b, n);
        system.spawn(source, next, n, bits);
    }
    system.await_all_actors_done();
    const double s = t.seconds();
    if (!sorted) bench::fail("radixsort: output not sorted");
    return {s, checksum};
}

}  // namespace savina_radixsort
