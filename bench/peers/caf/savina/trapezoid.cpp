// CAF 0.17 twin of bench/savina/trapezoid.cpp: N trapezoids over W
// workers, one work message each, parts summed in worker order.
namespace savina_trapezoid {

using work_atom = caf::atom_constant<caf::atom("work")>;
using part_atom = caf::atom_constant<caf::atom("part")>;

inline double fx(double x) {
    const double a = std::sin(x * x * x - 1);
    const double b = x + 1;
    const double c = a / b;
    const double d = std::sqrt(1 + std::exp(std::sqrt(2 * x)));
    return c * d;
}

inline double integrate(double left, double right, double h) {
    const long n = std::lround((right - left) / h);
    double area = 0;
    for (long i = 0; i < n; ++i) {
        const double lx = left + static_cast<double>(i) * h;
        area += 0.5 * (fx(lx) + fx(lx + h)) * h;
    }
    return area;
}

struct master_state {
    std::vector<double> parts;
    long left = 0;
};

caf::behavior master(caf::stateful_actor<master_state>* self, long workers,
                     std::vector<double>* out) {
    self->state.parts.assign(static_cast<std::size_t>(workers), 0);
    self->state.left = workers;
    return {[=](part_atom, long index, double area) {
        self->state.parts[static_cast<std::size_t>(index)] = area;
        if (--self->state.left == 0) {
            *out = self->state.parts;
            self->quit();
        }
    }};
}

caf::behavior worker(caf::event_based_actor* self) {
    return {[=](work_atom, const caf::actor& to, long index, double left, double right, double h) {
        self->send(to, part_atom::value, index, integrate(left, right, h));
        self->quit();
    }};
}

SAVINA_BENCH(trapezoid) {
    const long n = info.size("n", 10'000'000, 200'000);
    const long workers = info.size("pieces", 100, 100);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::vector<double> parts;
    bench::stopwatch t;
    {
        const double a = 1, b = 5, h = (b - a) / static_cast<double>(n);
        const double range = (b - a) / static_cast<double>(workers);
        auto m = system.spawn(master, workers, &parts);
        for (long i = 0; i < workers; ++i) {
            const double left = a + static_cast<double>(i) * range;
            caf::anon_send(system.spawn(worker), work_atom::value, m, i, left, left + range, h);
        }
    }
    system.await_all_actors_done();
    const double s = t.seconds();
    double area = 0;
    for (double p : parts) area += p;
    return {s, static_cast<std::uint64_t>(std::llround(area * 1e9))};
}

}  // namespace savina_trapezoid
