// Savina "Chameneos": C chameneos ask a mall for a meeting; the mall pairs
// them two by two, N meetings in all: it tells the first of each pair who
// the second is, the first answers the second with its new colour, and
// both ask again. Then the mall sends each one an exit, and each adds its
// meeting count to a total. Each chameneo's request is a message object it
// owns (at most one is in flight); the pairing and colour messages carry
// data and are value sends (the runtime frees them). Check: the total of
// meetings (2N).
#include <atomic>
#include <vector>

#include "savina.hpp"

namespace savina_chameneos {

enum colour : int { blue, red, yellow };
inline colour complement(colour a, colour b) { return a == b ? a : static_cast<colour>(3 - a - b); }

struct chameneo;
struct meet_request : troupe::message {
    chameneo* from = nullptr;
    colour c = blue;
};
struct meet : troupe::message {
    chameneo* other;
    colour c;
    meet(chameneo* o, colour k) : other(o), c(k) {}
};
struct change : troupe::message {
    colour c;
    explicit change(colour k) : c(k) {}
};
struct exit_msg : troupe::message {};

struct mall : troupe::actor {
    long meetings_left = 0, exits_left = 0;
    meet_request* waiting = nullptr;
    exit_msg bye;
    troupe::allocation receive(meet_request& r);
};

struct chameneo : troupe::actor {
    mall* the_mall = nullptr;
    std::atomic<long>* total = nullptr;
    colour c = blue;
    long meetings = 0;
    meet_request req;
    void ask() {
        req.c = c;
        *the_mall | req;
    }
    troupe::allocation receive(meet& m) {
        c = complement(c, m.c);
        ++meetings;
        troupe::send<change>(*m.other, c);
        ask();
        return troupe::Nodelete;
    }
    troupe::allocation receive(change& m) {
        c = m.c;
        ++meetings;
        ask();
        return troupe::Nodelete;
    }
    troupe::allocation receive(exit_msg&) {
        total->fetch_add(meetings);
        return troupe::Finished;
    }
};

troupe::allocation mall::receive(meet_request& r) {
    if (meetings_left == 0) {
        *r.from | bye;
        return --exits_left == 0 ? troupe::Finished : troupe::Nodelete;
    }
    if (waiting == nullptr) {
        waiting = &r;
        return troupe::Nodelete;
    }
    --meetings_left;
    troupe::send<meet>(*waiting->from, r.from, r.c);
    waiting = nullptr;
    return troupe::Nodelete;
}

SAVINA_BENCH(chameneos) {
    const long count = info.size("chameneos", 100, 100);
    const long n = info.size("n", 400'000, 20'000);
    troupe::actor_system sys{savina::config(info)};
    std::atomic<long> total{0};
    bench::stopwatch t;
    mall m;
    m.meetings_left = n;
    m.exits_left = count;
    std::vector<chameneo> all(static_cast<std::size_t>(count));
    for (long i = 0; i < count; ++i) {
        auto& a = all[static_cast<std::size_t>(i)];
        a.the_mall = &m;
        a.total = &total;
        a.c = static_cast<colour>(i % 3);
        a.req.from = &a;
        a.ask();
    }
    sys.stop();
    return {t.seconds(), static_cast<std::uint64_t>(total.load())};
}

}  // namespace savina_chameneos
