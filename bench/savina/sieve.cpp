// Savina "Sieve of Eratosthenes": a producer sends the odd numbers
// 3..N one message each into a chain of filters; each filter keeps up to K
// primes and passes on numbers none of them divides; the last filter
// stores a new prime, or creates the next filter when full. An end message
// follows the numbers down the chain. Numbers are value sends (a new
// message per hop); filters are created with new and freed by the runtime.
// Check: the primes found (counting 2).
#include <vector>

#include "savina.hpp"

namespace savina_sieve {

struct number : troupe::message {
    long value;
    explicit number(long v) : value(v) {}
};
struct end_msg : troupe::message {};

struct filter : troupe::actor {
    std::vector<long> primes;
    std::size_t capacity;
    filter* next = nullptr;
    long* found;
    filter(long first, std::size_t k, long* f) : capacity(k), found(f) {
        primes.reserve(k);
        primes.push_back(first);
    }
    troupe::allocation receive(number& m) {
        for (long p : primes)
            if (m.value % p == 0) return troupe::Nodelete;
        if (next != nullptr) troupe::send<number>(*next, m.value);
        else if (primes.size() < capacity) primes.push_back(m.value);
        else next = new filter{m.value, capacity, found};
        return troupe::Nodelete;
    }
    troupe::allocation receive(end_msg& m) {
        *found += static_cast<long>(primes.size());  // the chain ends one after another
        if (next != nullptr) *next | m;
        return troupe::Delete;
    }
};

struct start : troupe::message {};
struct producer : troupe::actor {
    filter* first = nullptr;
    long limit = 0;
    end_msg end;
    troupe::allocation receive(start&) {
        for (long v = 3; v <= limit; v += 2) troupe::send<number>(*first, v);
        *first | end;
        return troupe::Finished;
    }
};

SAVINA_BENCH(sieve) {
    const long limit = info.size("n", 150'000, 30'000);
    const long k = info.size("k", 1'000, 1'000);
    troupe::actor_system sys{savina::config(info)};
    long found = 1;  // 2
    bench::stopwatch t;
    producer p;
    p.first = new filter{3, static_cast<std::size_t>(k), &found};
    p.limit = limit;
    start go;
    p | go;
    sys.stop();
    return {t.seconds(), static_cast<std::uint64_t>(found)};
}

}  // namespace savina_sieve
