// Savina "Dining Philosophers": N philosophers each eat M times; an
// arbitrator holds the N forks, grants a hungry philosopher both of its
// forks or denies it (it asks again at once). Each philosopher's request
// and release are message objects it owns (one in flight); the arbitrator
// answers with one shared "eat" and one shared "denied" (they carry
// nothing). Check: the meals eaten (N * M).
#include <vector>

#include "savina.hpp"

namespace savina_philosopher {

struct philosopher;
struct hungry : troupe::message {
    philosopher* from = nullptr;
};
struct done_eating : troupe::message {
    long id = 0;
};
struct eat : troupe::message {};
struct denied : troupe::message {};
struct leaving : troupe::message {};

struct arbitrator : troupe::actor {
    std::vector<char> forks;  // 1: in use
    long seated = 0;
    eat yes;
    denied no;
    troupe::allocation receive(hungry& h);
    troupe::allocation receive(done_eating& d) {
        const auto n = static_cast<long>(forks.size());
        forks[static_cast<std::size_t>(d.id)] = 0;
        forks[static_cast<std::size_t>((d.id + 1) % n)] = 0;
        return troupe::Nodelete;
    }
    troupe::allocation receive(leaving&) {
        return --seated == 0 ? troupe::Finished : troupe::Nodelete;
    }
};

struct philosopher : troupe::actor {
    arbitrator* arb = nullptr;
    long id = 0, rounds = 0, meals = 0, denials = 0;
    hungry ask;
    done_eating release;
    leaving bye;
    troupe::allocation receive(eat&) {
        ++meals;
        *arb | release;
        if (meals == rounds) {
            *arb | bye;
            return troupe::Finished;
        }
        *arb | ask;
        return troupe::Nodelete;
    }
    troupe::allocation receive(denied&) {
        ++denials;
        *arb | ask;
        return troupe::Nodelete;
    }
};

troupe::allocation arbitrator::receive(hungry& h) {
    const auto n = static_cast<long>(forks.size());
    const long id = h.from->id;
    char& left = forks[static_cast<std::size_t>(id)];
    char& right = forks[static_cast<std::size_t>((id + 1) % n)];
    if (left || right) {
        *h.from | no;
    } else {
        left = right = 1;
        *h.from | yes;
    }
    return troupe::Nodelete;
}

SAVINA_BENCH(philosopher) {
    const long n = info.size("philosophers", 20, 20);
    const long rounds = info.size("rounds", 25'000, 2'000);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    arbitrator arb;
    arb.forks.assign(static_cast<std::size_t>(n), 0);
    arb.seated = n;
    std::vector<philosopher> all(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i) {
        auto& p = all[static_cast<std::size_t>(i)];
        p.arb = &arb;
        p.id = i;
        p.rounds = rounds;
        p.ask.from = &p;
        p.release.id = i;
        arb | p.ask;
    }
    sys.stop();
    const double s = t.seconds();
    long meals = 0;
    for (auto& p : all) meals += p.meals;
    return {s, static_cast<std::uint64_t>(meals)};
}

}  // namespace savina_philosopher
