// Savina "Bitonic Sort", as a recursive actor tree: an actor sorts its N
// values directly (ascending or descending as asked) at or below a
// threshold T; above it, it creates two child actors for its halves, one
// sorting up and one down, and on both answers merges the bitonic sequence
// they form with the bitonic merge network. Values travel in the messages
// (moved vectors); actors and messages are created with new and freed by
// the runtime. N is a power of two. Check: a checksum of the sorted
// sequence.
#include <algorithm>
#include <functional>
#include <vector>

#include "savina.hpp"

namespace savina_bitonicsort {

/// Sorts a bitonic sequence (length a power of two) up or down.
inline void bitonic_merge(std::vector<long>& v, bool up) {
    for (std::size_t half = v.size() / 2; half > 0; half /= 2)
        for (std::size_t i = 0; i < v.size(); ++i)
            if ((i & half) == 0 && (v[i] > v[i + half]) == up) std::swap(v[i], v[i + half]);
}

struct sorter;
struct sort_msg : troupe::message {
    std::vector<long> values;
    bool up;
    sort_msg(std::vector<long> v, bool u) : values(std::move(v)), up(u) {}
};
struct sorted_msg : troupe::message {
    std::vector<long> values;
    bool first;  // the lower half of the parent's values
    sorted_msg(std::vector<long> v, bool f) : values(std::move(v)), first(f) {}
};

struct sorter : troupe::actor {
    sorter* parent;
    bool first;
    std::size_t threshold;
    std::vector<long>* out;  // the root's answer
    std::vector<long> lower, upper;
    bool up = true;
    int waiting = 0;
    sorter(sorter* p, bool f, std::size_t t, std::vector<long>* o)
        : parent(p), first(f), threshold(t), out(o) {}

    troupe::allocation answer(std::vector<long> v) {
        if (parent == nullptr) {
            *out = std::move(v);
            return troupe::Finished;
        }
        troupe::send<sorted_msg>(*parent, std::move(v), first);
        return troupe::Delete;
    }
    troupe::allocation receive(sort_msg& m) {
        auto& v = m.values;
        up = m.up;
        if (v.size() <= threshold) {
            if (up) std::sort(v.begin(), v.end());
            else std::sort(v.begin(), v.end(), std::greater<long>{});
            return answer(std::move(v));
        }
        const auto half = static_cast<std::ptrdiff_t>(v.size() / 2);
        troupe::send<sort_msg>(*new sorter{this, true, threshold, nullptr},
                               std::vector<long>(v.begin(), v.begin() + half), true);
        troupe::send<sort_msg>(*new sorter{this, false, threshold, nullptr},
                               std::vector<long>(v.begin() + half, v.end()), false);
        waiting = 2;
        return troupe::Nodelete;
    }
    troupe::allocation receive(sorted_msg& m) {
        (m.first ? lower : upper) = std::move(m.values);
        if (--waiting > 0) return troupe::Nodelete;
        lower.insert(lower.end(), upper.begin(), upper.end());
        bitonic_merge(lower, up);
        return answer(std::move(lower));
    }
};

SAVINA_BENCH(bitonicsort) {
    const long n = 1L << info.size("log2n", 20, 15);
    const long threshold = info.size("threshold", 2'048, 2'048);
    std::vector<long> input(static_cast<std::size_t>(n));
    savina::lcg rng{5};
    for (auto& x : input) x = rng.below(1L << 40);
    troupe::actor_system sys{savina::config(info)};
    std::vector<long> sorted;
    bench::stopwatch t;
    sorter root{nullptr, true, static_cast<std::size_t>(threshold), &sorted};
    troupe::send<sort_msg>(root, std::move(input), true);
    sys.stop();
    const double s = t.seconds();
    if (!std::is_sorted(sorted.begin(), sorted.end()) || static_cast<long>(sorted.size()) != n)
        bench::fail("bitonicsort: output not sorted");
    std::uint64_t h = 0;
    for (long v : sorted) h = savina::mix(h, static_cast<std::uint64_t>(v));
    return {s, h};
}

}  // namespace savina_bitonicsort
