// Savina "Radix Sort": a source sends N random values (< 2^B) one message
// each down a pipeline of B sort stages, one per bit from the lowest: a
// stage passes values whose bit is 0 on at once and holds those whose bit
// is 1 until it has seen all N, then passes them on; the last stage feeds
// a validator. Values are value sends (a new message per hop). Check: a
// checksum of the sorted sequence (fixed: each stage keeps arrival order).
#include <vector>

#include "savina.hpp"

namespace savina_radixsort {

struct value_msg : troupe::message {
    long value;
    explicit value_msg(long v) : value(v) {}
};

struct validator : troupe::actor {
    long expected = 0, seen = 0, previous = -1;
    bool sorted = true;
    std::uint64_t checksum = 0;
    troupe::allocation receive(value_msg& m) {
        if (m.value < previous) sorted = false;
        previous = m.value;
        checksum = savina::mix(checksum, static_cast<std::uint64_t>(m.value));
        return ++seen == expected ? troupe::Finished : troupe::Nodelete;
    }
};

struct sort_stage : troupe::actor {
    sort_stage* next = nullptr;  // null: the last stage, which feeds the validator
    validator* last = nullptr;
    long bit = 0, expected = 0, seen = 0;
    std::vector<long> ones;
    void pass(long v) {
        if (next != nullptr) troupe::send<value_msg>(*next, v);
        else troupe::send<value_msg>(*last, v);
    }
    troupe::allocation receive(value_msg& m) {
        if ((m.value & bit) == 0) pass(m.value);
        else ones.push_back(m.value);
        if (++seen < expected) return troupe::Nodelete;
        for (long v : ones) pass(v);
        // A finished actor keeps its fields (its owner, main's vector,
        // destroys it); CAF destroys a stateful actor's state when it
        // quits. Release the held values here as the twin does, so the
        // two hold the same data at every point.
        std::vector<long>().swap(ones);
        return troupe::Finished;
    }
};

struct start : troupe::message {};

struct source : troupe::actor {
    sort_stage* first = nullptr;
    long n = 0, bits = 0;
    troupe::allocation receive(start&) {
        savina::lcg rng{7};
        for (long i = 0; i < n; ++i) troupe::send<value_msg>(*first, rng.below(1L << bits));
        return troupe::Finished;
    }
};

SAVINA_BENCH(radixsort) {
    const long n = info.size("n", 100'000, 10'000);
    const long bits = info.size("bits", 16, 16);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    validator check;
    check.expected = n;
    std::vector<sort_stage> stages(static_cast<std::size_t>(bits));
    for (long b = 0; b < bits; ++b) {
        auto& s = stages[static_cast<std::size_t>(b)];
        s.bit = 1L << b;
        s.expected = n;
        s.next = b + 1 < bits ? &stages[static_cast<std::size_t>(b + 1)] : nullptr;
        s.last = &check;
    }
    source src;
    src.first = &stages[0];
    src.n = n;
    src.bits = bits;
    start go;
    src | go;
    sys.stop();
    const double s = t.seconds();
    if (!check.sorted) bench::fail("radixsort: output not sorted");
    return {s, check.checksum};
}

}  // namespace savina_radixsort
