// CAF 0.17 twin of bench/savina/facloc.cpp: N customers streamed into a
// quadtree of actors that split past a cost threshold; an end message
// collects facilities and cost.
namespace savina_facloc {

using customer_atom = caf::atom_constant<caf::atom("customer")>;
using end_atom = caf::atom_constant<caf::atom("end")>;
using summary_atom = caf::atom_constant<caf::atom("summary")>;

struct point {
    double x, y;
};

struct quadrant_state {
    std::vector<point> customers;
    double cost = 0;
    std::vector<caf::actor> children;
    caf::actor parent;
    long facilities = 0, total_cost = 0;
    int waiting = 0;
};

caf::behavior quadrant(caf::stateful_actor<quadrant_state>* self, caf::actor parent, double x0,
                       double y0, double x1, double y1, long depth, long max_depth,
                       double threshold, std::pair<long, long>* out) {
    self->state.parent = std::move(parent);
    const double mx = (x0 + x1) / 2, my = (y0 + y1) / 2;
    auto child_of = [=](double x, double y) {
        return static_cast<std::size_t>((x >= mx ? 1 : 0) + (y >= my ? 2 : 0));
    };
    auto answer = [=](long f, long c) {
        if (self->state.parent) self->send(self->state.parent, summary_atom::value, f, c);
        else *out = {f, c};
        self->state.parent = nullptr;
        self->state.children.clear();
        self->quit();
    };
    return {[=](customer_atom, double x, double y) {
                auto& st = self->state;
                if (!st.children.empty()) {
                    self->send(st.children[child_of(x, y)], customer_atom::value, x, y);
                    return;
                }
                st.customers.push_back(point{x, y});
                st.cost += std::hypot(x - mx, y - my);
                if (st.cost > threshold && depth < max_depth) {
                    for (int q = 0; q < 4; ++q)
                        st.children.push_back(
                            self->spawn(quadrant, caf::actor_cast<caf::actor>(self),
                                        q & 1 ? mx : x0, q & 2 ? my : y0, q & 1 ? x1 : mx,
                                        q & 2 ? y1 : my, depth + 1, max_depth, threshold, out));
                    for (point p : st.customers)
                        self->send(st.children[child_of(p.x, p.y)], customer_atom::value, p.x, p.y);
                    st.customers.clear();
                }
            },
            [=](end_atom) {
                auto& st = self->state;
                if (st.children.empty()) {
                    answer(1, std::llround(st.cost * 1e6));
                    return;
                }
                for (auto& c : st.children) self->send(c, end_atom::value);
                st.waiting = 4;
            },
            [=](summary_atom, long f, long c) {
                auto& st = self->state;
                st.facilities += f;
                st.total_cost += c;
                if (--st.waiting == 0) answer(st.facilities, st.total_cost);
            }};
}

caf::behavior producer(caf::event_based_actor* self, caf::actor root, long n) {
    savina::lcg rng{13};
    for (long i = 0; i < n; ++i) {
        const double x = static_cast<double>(rng.below(1'000'000)) / 1e6;
        const double y = static_cast<double>(rng.below(1'000'000)) / 1e6;
        self->send(root, customer_atom::value, x, y);
    }
    self->send(root, end_atom::value);
    self->quit();
    return {};
}

SAVINA_BENCH(facloc) {
    const long n = info.size("n", 400'000, 20'000);
    const long max_depth = info.size("depth", 6, 6);
    const double threshold = static_cast<double>(info.size("threshold", 2'000, 200));
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::pair<long, long> result{0, 0};
    bench::stopwatch t;
    system.spawn(
        producer,
        system.spawn(quadrant, caf::actor{}, 0.0, 0.0, 1.0, 1.0, 0L, max_depth, threshold, &result),
        n);
    system.await_all_actors_done();
    const double s = t.seconds();
    return {s, static_cast<std::uint64_t>(result.first) * 1'000'000'007ULL +
                   static_cast<std::uint64_t>(result.second)};
}

}  // namespace savina_facloc
