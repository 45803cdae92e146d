// Savina "Fork Join (actor creation)": main creates N actors, sends each
// one message; each does a small computation (sin^2) and ends. Actors and
// messages are heap-allocated and freed by the runtime (Delete). Check:
// actors that ran, counted in one shared atomic.
#include <atomic>
#include <cmath>

#include "savina.hpp"

namespace savina_fjcreate {

struct work : troupe::message {
    double theta;
    explicit work(double t) : theta(t) {}
};

struct worker : troupe::actor {
    std::atomic<long>* done;
    explicit worker(std::atomic<long>* d) : done(d) {}
    troupe::allocation receive(work& w) {
        const double s = std::sin(w.theta);
        done->fetch_add(s * s <= 1.0 ? 1 : 2, std::memory_order_relaxed);
        return troupe::Delete;
    }
};

SAVINA_BENCH(fjcreate) {
    const long n = info.size("n", 500'000, 20'000);
    troupe::actor_system sys{savina::config(info)};
    std::atomic<long> done{0};
    bench::stopwatch t;
    for (long i = 0; i < n; ++i) troupe::send<work>(*new worker{&done}, 37.2);
    sys.stop();
    return {t.seconds(), static_cast<std::uint64_t>(done.load())};
}

}  // namespace savina_fjcreate
