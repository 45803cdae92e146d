// Savina "Online Facility Location": a producer streams N customer points
// (a deterministic generator, uniform in the unit square) into a quadtree
// of actors. A leaf quadrant keeps its customers and their cost (distance
// to the quadrant's centre, its facility); once the cost passes a
// threshold F and the depth is below D it opens four child quadrants,
// hands them its customers and forwards later ones. An end message then
// walks the tree and every quadrant answers its parent with its
// facilities and cost. Points and answers are value sends; quadrants are
// created with new and freed by the runtime. Check: the facilities opened
// and the total cost (each leaf's cost times 1e6, rounded).
#include <cmath>
#include <utility>
#include <vector>

#include "savina.hpp"

namespace savina_facloc {

struct point {
    double x, y;
};
struct customer : troupe::message {
    point p;
    explicit customer(point q) : p(q) {}
};
struct end_msg : troupe::message {};
struct summary : troupe::message {
    long facilities, cost;
    summary(long f, long c) : facilities(f), cost(c) {}
};

struct quadrant : troupe::actor {
    quadrant* parent;
    double x0, y0, x1, y1;
    long depth, max_depth;
    double threshold;
    std::pair<long, long>* out;  // the root's answer: facilities, cost
    std::vector<point> customers;
    double cost = 0;
    quadrant* children[4] = {};
    long facilities = 0, total_cost = 0;
    int waiting = 0;

    quadrant(quadrant* p, double ax, double ay, double bx, double by, long d, long md, double t,
             std::pair<long, long>* o)
        : parent(p),
          x0(ax),
          y0(ay),
          x1(bx),
          y1(by),
          depth(d),
          max_depth(md),
          threshold(t),
          out(o) {}

    int child_of(point q) const {
        const double mx = (x0 + x1) / 2, my = (y0 + y1) / 2;
        return (q.x >= mx ? 1 : 0) + (q.y >= my ? 2 : 0);
    }
    troupe::allocation receive(customer& c) {
        if (children[0] != nullptr) {
            troupe::send<customer>(*children[child_of(c.p)], c.p);
            return troupe::Nodelete;
        }
        customers.push_back(c.p);
        cost += std::hypot(c.p.x - (x0 + x1) / 2, c.p.y - (y0 + y1) / 2);
        if (cost > threshold && depth < max_depth) {
            const double mx = (x0 + x1) / 2, my = (y0 + y1) / 2;
            for (int q = 0; q < 4; ++q)
                children[q] = new quadrant{
                    this,      q & 1 ? mx : x0, q & 2 ? my : y0, q & 1 ? x1 : mx, q & 2 ? y1 : my,
                    depth + 1, max_depth,       threshold,       nullptr};
            for (point p : customers) troupe::send<customer>(*children[child_of(p)], p);
            customers.clear();
        }
        return troupe::Nodelete;
    }
    troupe::allocation answer(long f, long c) {
        if (parent == nullptr) {
            *out = {f, c};
            return troupe::Finished;
        }
        troupe::send<summary>(*parent, f, c);
        return troupe::Delete;
    }
    troupe::allocation receive(end_msg& m) {
        if (children[0] == nullptr) return answer(1, std::llround(cost * 1e6));
        for (quadrant* q : children) *q | m;  // the producer's, passed down the tree
        waiting = 4;
        return troupe::Nodelete;
    }
    troupe::allocation receive(summary& s) {
        facilities += s.facilities;
        total_cost += s.cost;
        if (--waiting > 0) return troupe::Nodelete;
        return answer(facilities, total_cost);
    }
};

struct start : troupe::message {};
struct producer : troupe::actor {
    quadrant* root = nullptr;
    long n = 0;
    end_msg end;
    troupe::allocation receive(start&) {
        savina::lcg rng{13};
        for (long i = 0; i < n; ++i) {
            const double x = static_cast<double>(rng.below(1'000'000)) / 1e6;
            const double y = static_cast<double>(rng.below(1'000'000)) / 1e6;
            troupe::send<customer>(*root, point{x, y});
        }
        *root | end;
        return troupe::Finished;
    }
};

SAVINA_BENCH(facloc) {
    const long n = info.size("n", 400'000, 20'000);
    const long max_depth = info.size("depth", 6, 6);
    const double threshold = static_cast<double>(info.size("threshold", 2'000, 200));
    troupe::actor_system sys{savina::config(info)};
    std::pair<long, long> result{0, 0};
    bench::stopwatch t;
    quadrant root{nullptr, 0, 0, 1, 1, 0, max_depth, threshold, &result};
    producer p;
    p.root = &root;
    p.n = n;
    start go;
    p | go;
    sys.stop();
    const double s = t.seconds();
    return {s, static_cast<std::uint64_t>(result.first) * 1'000'000'007ULL +
                   static_cast<std::uint64_t>(result.second)};
}

}  // namespace savina_facloc
