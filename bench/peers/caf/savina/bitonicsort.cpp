// CAF 0.17 twin of bench/savina/bitonicsort.cpp: a recursive actor tree;
// each parent requests its halves sorted up and down from two children
// and merges the bitonic sequence.
namespace savina_bitonicsort {

inline void bitonic_merge(std::vector<long>& v, bool up) {
    for (std::size_t half = v.size() / 2; half > 0; half /= 2)
        for (std::size_t i = 0; i < v.size(); ++i)
            if ((i & half) == 0 && (v[i] > v[i + half]) == up) std::swap(v[i], v[i + half]);
}

struct sorter_state {
    std::vector<long> lower, upper;
    int waiting = 0;
};

caf::behavior sorter(caf::stateful_actor<sorter_state>* self, std::size_t threshold) {
    return {[=](std::vector<long>& v, bool up) -> caf::result<std::vector<long>> {
        if (v.size() <= threshold) {
            if (up) std::sort(v.begin(), v.end());
            else std::sort(v.begin(), v.end(), std::greater<long>{});
            self->quit();
            return std::move(v);
        }
        const auto half = static_cast<std::ptrdiff_t>(v.size() / 2);
        auto rp = self->make_response_promise<std::vector<long>>();
        auto done = [=](bool first, std::vector<long>& part) mutable {
            auto& st = self->state;
            (first ? st.lower : st.upper) = std::move(part);
            if (++st.waiting < 2) return;
            st.lower.insert(st.lower.end(), st.upper.begin(), st.upper.end());
            bitonic_merge(st.lower, up);
            rp.deliver(std::move(st.lower));
            self->quit();
        };
        self->request(self->spawn(sorter, threshold), caf::infinite,
                      std::vector<long>(v.begin(), v.begin() + half), true)
            .then([=](std::vector<long>& part) mutable { done(true, part); });
        self->request(self->spawn(sorter, threshold), caf::infinite,
                      std::vector<long>(v.begin() + half, v.end()), false)
            .then([=](std::vector<long>& part) mutable { done(false, part); });
        return rp;
    }};
}

SAVINA_BENCH(bitonicsort) {
    const long n = 1L << info.size("log2n", 20, 15);
    const long threshold = info.size("threshold", 2'048, 2'048);
    std::vector<long> input(static_cast<std::size_t>(n));
    savina::lcg rng{5};
    for (auto& x : input) x = rng.below(1L << 40);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::vector<long> sorted;
    bench::stopwatch t;
    {
        caf::scoped_actor self{system};
        self->request(system.spawn(sorter, static_cast<std::size_t>(threshold)), caf::infinite,
                      std::move(input), true)
            .receive([&](std::vector<long>& v) { sorted = std::move(v); }, [&](caf::error&) {});
    }
    system.await_all_actors_done();
    const double s = t.seconds();
    if (!std::is_sorted(sorted.begin(), sorted.end()) || static_cast<long>(sorted.size()) != n)
        bench::fail("bitonicsort: output not sorted");
    std::uint64_t h = 0;
    for (long v : sorted) h = savina::mix(h, static_cast<std::uint64_t>(v));
    return {s, h};
}

}  // namespace savina_bitonicsort
