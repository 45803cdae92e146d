// CAF 0.17 twin of bench/savina/quicksort.cpp: an actor per partition
// above T values, each child answering its parent's request with its
// sorted part (vectors in the messages).
namespace savina_quicksort {

struct sorter_state {
    std::vector<long> low, middle, high;
    int waiting = 0;
};

caf::behavior sorter(caf::stateful_actor<sorter_state>* self, std::size_t threshold) {
    return {[=](std::vector<long>& v) -> caf::result<std::vector<long>> {
        if (v.size() <= threshold) {
            std::sort(v.begin(), v.end());
            self->quit();
            return std::move(v);
        }
        const long pivot = v[v.size() / 2];
        std::vector<long> lo, hi;
        for (long x : v) {
            if (x < pivot) lo.push_back(x);
            else if (x > pivot) hi.push_back(x);
            else self->state.middle.push_back(x);
        }
        auto rp = self->make_response_promise<std::vector<long>>();
        auto done = [=](bool lower, std::vector<long>& part) mutable {
            auto& st = self->state;
            (lower ? st.low : st.high) = std::move(part);
            if (++st.waiting < 2) return;
            st.low.insert(st.low.end(), st.middle.begin(), st.middle.end());
            st.low.insert(st.low.end(), st.high.begin(), st.high.end());
            rp.deliver(std::move(st.low));
            self->quit();
        };
        self->request(self->spawn(sorter, threshold), caf::infinite, std::move(lo))
            .then([=](std::vector<long>& part) mutable { done(true, part); });
        self->request(self->spawn(sorter, threshold), caf::infinite, std::move(hi))
            .then([=](std::vector<long>& part) mutable { done(false, part); });
        return rp;
    }};
}

SAVINA_BENCH(quicksort) {
    const long n = info.size("n", 2'000'000, 100'000);
    const long threshold = info.size("threshold", 2'048, 2'048);
    std::vector<long> input(static_cast<std::size_t>(n));
    savina::lcg rng{3};
    for (auto& x : input) x = rng.below(1L << 40);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::vector<long> sorted;
    bench::stopwatch t;
    {
        caf::scoped_actor self{system};
        self->request(system.spawn(sorter, static_cast<std::size_t>(threshold)), caf::infinite,
                      std::move(input))
            .receive([&](std::vector<long>& v) { sorted = std::move(v); }, [&](caf::error&) {});
    }
    system.await_all_actors_done();
    const double s = t.seconds();
    if (!std::is_sorted(sorted.begin(), sorted.end()) || static_cast<long>(sorted.size()) != n)
        bench::fail("quicksort: output not sorted");
    std::uint64_t h = 0;
    for (long v : sorted) h = savina::mix(h, static_cast<std::uint64_t>(v));
    return {s, h};
}

}  // namespace savina_quicksort
