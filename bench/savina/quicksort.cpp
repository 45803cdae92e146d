// Savina "Quicksort": an actor sorts its values directly below a threshold
// T; above it, it partitions them round a pivot, creates two child actors
// for the lower and upper parts, and when both have answered sends its
// parent the concatenation. Values travel in the messages (moved
// vectors); actors and messages are created with new and freed by the
// runtime. Check: a checksum of the sorted sequence.
#include <algorithm>
#include <vector>

#include "savina.hpp"

namespace savina_quicksort {

struct sorter;
struct sort_msg : troupe::message {
    std::vector<long> values;
    explicit sort_msg(std::vector<long> v) : values(std::move(v)) {}
};
struct sorted_msg : troupe::message {
    std::vector<long> values;
    bool lower;
    sorted_msg(std::vector<long> v, bool l) : values(std::move(v)), lower(l) {}
};

struct sorter : troupe::actor {
    sorter* parent;
    bool lower;  // which part of the parent this is
    std::size_t threshold;
    std::vector<long>* out;  // the root's answer (parent is null)
    std::vector<long> low, middle, high;
    int waiting = 0;
    sorter(sorter* p, bool l, std::size_t t, std::vector<long>* o)
        : parent(p), lower(l), threshold(t), out(o) {}

    troupe::allocation answer(std::vector<long> v) {
        if (parent == nullptr) {
            *out = std::move(v);
            return troupe::Finished;
        }
        troupe::send<sorted_msg>(*parent, std::move(v), lower);
        return troupe::Delete;
    }
    troupe::allocation receive(sort_msg& m) {
        auto& v = m.values;
        if (v.size() <= threshold) {
            std::sort(v.begin(), v.end());
            return answer(std::move(v));
        }
        const long pivot = v[v.size() / 2];
        std::vector<long> lo, hi;
        for (long x : v) {
            if (x < pivot) lo.push_back(x);
            else if (x > pivot) hi.push_back(x);
            else middle.push_back(x);
        }
        troupe::send<sort_msg>(*new sorter{this, true, threshold, nullptr}, std::move(lo));
        troupe::send<sort_msg>(*new sorter{this, false, threshold, nullptr}, std::move(hi));
        waiting = 2;
        return troupe::Nodelete;
    }
    troupe::allocation receive(sorted_msg& m) {
        (m.lower ? low : high) = std::move(m.values);
        if (--waiting > 0) return troupe::Nodelete;
        low.insert(low.end(), middle.begin(), middle.end());
        low.insert(low.end(), high.begin(), high.end());
        return answer(std::move(low));
    }
};

SAVINA_BENCH(quicksort) {
    const long n = info.size("n", 2'000'000, 100'000);
    const long threshold = info.size("threshold", 2'048, 2'048);
    std::vector<long> input(static_cast<std::size_t>(n));
    savina::lcg rng{3};
    for (auto& x : input) x = rng.below(1L << 40);
    troupe::actor_system sys{savina::config(info)};
    std::vector<long> sorted;
    bench::stopwatch t;
    sorter root{nullptr, true, static_cast<std::size_t>(threshold), &sorted};
    troupe::send<sort_msg>(root, std::move(input));
    sys.stop();
    const double s = t.seconds();
    if (!std::is_sorted(sorted.begin(), sorted.end()) || static_cast<long>(sorted.size()) != n)
        bench::fail("quicksort: output not sorted");
    std::uint64_t h = 0;
    for (long v : sorted) h = savina::mix(h, static_cast<std::uint64_t>(v));
    return {s, h};
}

}  // namespace savina_quicksort
