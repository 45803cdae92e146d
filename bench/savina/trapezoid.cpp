// Savina "Trapezoidal Approximation": the integral of
// f(x) = sin(x^3 - 1) / (x + 1) * sqrt(1 + exp(sqrt(2x))) over [1, 5] with
// N trapezoids, split over W worker actors; each gets one work message and
// answers a master with its part. Work messages are the master's, one per
// worker; answers are value sends. Check: the area (parts summed in worker
// order), times 1e9, rounded.
#include <cmath>
#include <vector>

#include "savina.hpp"

namespace savina_trapezoid {

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

struct master;
struct work : troupe::message {
    master* from = nullptr;
    long index = 0;
    double left = 0, right = 0, h = 0;
};
struct part : troupe::message {
    long index;
    double area;
    part(long i, double a) : index(i), area(a) {}
};

struct master : troupe::actor {
    std::vector<double> parts;
    long left = 0;
    troupe::allocation receive(part& p) {
        parts[static_cast<std::size_t>(p.index)] = p.area;
        return --left == 0 ? troupe::Finished : troupe::Nodelete;
    }
};

struct worker : troupe::actor {
    troupe::allocation receive(work& w) {
        troupe::send<part>(*w.from, w.index, integrate(w.left, w.right, w.h));
        return troupe::Finished;
    }
};

SAVINA_BENCH(trapezoid) {
    const long n = info.size("n", 10'000'000, 200'000);
    const long workers = info.size("pieces", 100, 100);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    const double a = 1, b = 5, h = (b - a) / static_cast<double>(n);
    const double range = (b - a) / static_cast<double>(workers);
    master m;
    m.parts.assign(static_cast<std::size_t>(workers), 0);
    m.left = workers;
    std::vector<worker> all(static_cast<std::size_t>(workers));
    std::vector<work> jobs(static_cast<std::size_t>(workers));
    for (long i = 0; i < workers; ++i) {
        auto& j = jobs[static_cast<std::size_t>(i)];
        j.from = &m;
        j.index = i;
        j.left = a + static_cast<double>(i) * range;
        j.right = j.left + range;
        j.h = h;
        all[static_cast<std::size_t>(i)] | j;
    }
    sys.stop();
    const double s = t.seconds();
    double area = 0;
    for (double p : m.parts) area += p;
    return {s, static_cast<std::uint64_t>(std::llround(area * 1e9))};
}

}  // namespace savina_trapezoid
