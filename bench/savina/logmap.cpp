// Savina "Logistic Map Series": S series, each computing T terms of
// x' = r x (1 - x) with its own rate; a series actor asks its rate
// computer for each next term and waits for the answer, then reports its
// last term to a collector. Each request and answer has one message object
// (its owner never has two in flight). Check: the sum of the last terms
// (summed in series order, times 1e9, rounded).
#include <cmath>
#include <vector>

#include "savina.hpp"

namespace savina_logmap {

struct series;
struct compute : troupe::message {
    series* from = nullptr;
    double term = 0;
};
struct result : troupe::message {
    double term = 0;
};

struct rate_computer : troupe::actor {
    double rate = 0;
    result answer;
    troupe::allocation receive(compute& c);
};

struct collector : troupe::actor {
    std::vector<double> last;
    long left = 0;
    struct term_msg : troupe::message {
        long index = 0;
        double term = 0;
    };
    troupe::allocation receive(term_msg& m) {
        last[static_cast<std::size_t>(m.index)] = m.term;
        return --left == 0 ? troupe::Finished : troupe::Nodelete;
    }
};

struct series : troupe::actor {
    rate_computer* computer = nullptr;
    collector* sink = nullptr;
    long terms_left = 0;
    compute ask;
    collector::term_msg report;
    troupe::allocation receive(result& r) {
        if (--terms_left == 0) {
            report.term = r.term;
            *sink | report;
            *computer | troupe::finished_msg;
            return troupe::Finished;
        }
        ask.term = r.term;
        *computer | ask;
        return troupe::Nodelete;
    }
};

troupe::allocation rate_computer::receive(compute& c) {
    answer.term = rate * c.term * (1 - c.term);
    *c.from | answer;
    return troupe::Nodelete;
}

SAVINA_BENCH(logmap) {
    const long n_series = info.size("series", 10, 10);
    const long terms = info.size("terms", 50'000, 5'000);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    collector sink;
    sink.last.assign(static_cast<std::size_t>(n_series), 0);
    sink.left = n_series;
    std::vector<rate_computer> computers(static_cast<std::size_t>(n_series));
    std::vector<series> all(static_cast<std::size_t>(n_series));
    for (long i = 0; i < n_series; ++i) {
        const auto k = static_cast<std::size_t>(i);
        computers[k].rate = 3.46 + 0.0025 * static_cast<double>(i);
        all[k].computer = &computers[k];
        all[k].sink = &sink;
        all[k].terms_left = terms;
        all[k].ask.from = &all[k];
        all[k].ask.term = 0.01 * static_cast<double>(i + 1);
        all[k].report.index = i;
        computers[k] | all[k].ask;
    }
    sys.stop();
    const double s = t.seconds();
    double sum = 0;
    for (double v : sink.last) sum += v;
    return {s, static_cast<std::uint64_t>(std::llround(sum * 1e9))};
}

}  // namespace savina_logmap
