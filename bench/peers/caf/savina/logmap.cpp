// CAF 0.17 twin of bench/savina/logmap.cpp: S series of T terms, each term
// a request to the series' rate computer.
namespace savina_logmap {

using term_atom = caf::atom_constant<caf::atom("term")>;

caf::behavior rate_computer(caf::event_based_actor*, double rate) {
    return {[=](double x) { return rate * x * (1 - x); }};
}

struct collector_state {
    std::vector<double> last;
    long left = 0;
};

caf::behavior collector(caf::stateful_actor<collector_state>* self, long n,
                        std::vector<double>* out) {
    self->state.last.assign(static_cast<std::size_t>(n), 0);
    self->state.left = n;
    return {[=](term_atom, long index, double term) {
        self->state.last[static_cast<std::size_t>(index)] = term;
        if (--self->state.left == 0) {
            *out = self->state.last;
            self->quit();
        }
    }};
}

struct series_state {
    long terms_left = 0;
};

caf::behavior series(caf::stateful_actor<series_state>* self, caf::actor computer, caf::actor sink,
                     long index, long terms, double start) {
    self->state.terms_left = terms;
    self->send(computer, start);
    return {[=](double term) {
        if (--self->state.terms_left == 0) {
            self->send(sink, term_atom::value, index, term);
            self->send_exit(computer, caf::exit_reason::user_shutdown);
            self->quit();
            return;
        }
        self->send(computer, term);
    }};
}

SAVINA_BENCH(logmap) {
    const long n_series = info.size("series", 10, 10);
    const long terms = info.size("terms", 50'000, 5'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::vector<double> last;
    bench::stopwatch t;
    {
        auto sink = system.spawn(collector, n_series, &last);
        for (long i = 0; i < n_series; ++i) {
            auto computer = system.spawn(rate_computer, 3.46 + 0.0025 * static_cast<double>(i));
            system.spawn(series, computer, sink, i, terms, 0.01 * static_cast<double>(i + 1));
        }
    }
    system.await_all_actors_done();
    const double s = t.seconds();
    double sum = 0;
    for (double v : last) sum += v;
    return {s, static_cast<std::uint64_t>(std::llround(sum * 1e9))};
}

}  // namespace savina_logmap
