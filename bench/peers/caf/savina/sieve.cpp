// CAF 0.17 twin of bench/savina/sieve.cpp: odd numbers 3..N through a
// chain of filters holding up to K primes each, spawned as needed.
namespace savina_sieve {

using end_atom = caf::atom_constant<caf::atom("end")>;

struct filter_state {
    std::vector<long> primes;
    caf::actor next;
};

caf::behavior filter(caf::stateful_actor<filter_state>* self, long first, std::size_t capacity,
                     long* found) {
    self->state.primes.reserve(capacity);
    self->state.primes.push_back(first);
    return {[=](long v) {
                auto& st = self->state;
                for (long p : st.primes)
                    if (v % p == 0) return;
                if (st.next) self->send(st.next, v);
                else if (st.primes.size() < capacity) st.primes.push_back(v);
                else st.next = self->spawn(filter, v, capacity, found);
            },
            [=](end_atom) {
                *found += static_cast<long>(self->state.primes.size());
                if (self->state.next) self->send(self->state.next, end_atom::value);
                self->state.next = nullptr;
                self->quit();
            }};
}

caf::behavior producer(caf::event_based_actor* self, caf::actor first, long limit) {
    for (long v = 3; v <= limit; v += 2) self->send(first, v);
    self->send(first, end_atom::value);
    self->quit();
    return {};
}

SAVINA_BENCH(sieve) {
    const long limit = info.size("n", 150'000, 30'000);
    const long k = info.size("k", 1'000, 1'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    long found = 1;  // 2
    bench::stopwatch t;
    system.spawn(producer, system.spawn(filter, 3L, static_cast<std::size_t>(k), &found), limit);
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(found)};
}

}  // namespace savina_sieve
