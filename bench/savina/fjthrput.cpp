// Savina "Fork Join (throughput)": A actors each receive N messages from
// main and do a small computation (sin^2) per message. The message carries
// nothing, so main sends one object to everyone (messages go by
// reference). Check: messages processed, summed over actors.
#include <cmath>
#include <vector>

#include "savina.hpp"

namespace savina_fjthrput {

struct work : troupe::message {};

struct worker : troupe::actor {
    long processed = 0;
    double sink = 0;
    troupe::allocation receive(work&) {
        const double s = std::sin(37.2 + static_cast<double>(processed));
        sink += s * s;
        ++processed;
        return troupe::Nodelete;
    }
};

SAVINA_BENCH(fjthrput) {
    const long actors = info.size("actors", 60, 60);
    const long n = info.size("n", 20'000, 2'000);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    std::vector<worker> workers(static_cast<std::size_t>(actors));
    work w;
    for (long i = 0; i < n; ++i)
        for (auto& a : workers) a | w;
    for (auto& a : workers) a | troupe::finished_msg;
    sys.stop();
    const double s = t.seconds();
    long total = 0;
    for (auto& a : workers) total += a.processed + (a.sink < 0 ? 1 : 0);
    return {s, static_cast<std::uint64_t>(total)};
}

}  // namespace savina_fjthrput
