// Savina "Big": A actors each send N pings, one at a time, to random
// other actors (a deterministic generator per actor) and wait for the pong
// before the next; an actor that has sent its N tells a sink, and the
// sink, once all have, stops everyone. Each actor's one ping is a message
// object it owns and re-sends; the pong carries nothing, so each actor
// answers with one object of its own. Check: pongs received in total.
#include <vector>

#include "savina.hpp"

namespace savina_big {

struct big_actor;
struct ping : troupe::message {
    big_actor* from = nullptr;
};
struct pong : troupe::message {};
struct done : troupe::message {};
struct stop : troupe::message {};

struct sink_actor : troupe::actor {
    std::vector<big_actor>* all = nullptr;
    long left = 0;
    stop bye;  // carries nothing: one object for every actor
    troupe::allocation receive(done&);
};

struct big_actor : troupe::actor {
    std::vector<big_actor>* all = nullptr;
    sink_actor* sink = nullptr;
    savina::lcg rng{0};
    long left = 0, pongs = 0;
    ping my_ping;
    pong my_pong;
    done my_done;

    void send_ping() {
        auto& target = (*all)[static_cast<std::size_t>(rng.below(static_cast<long>(all->size())))];
        target | my_ping;
    }
    troupe::allocation receive(ping& p) {
        *p.from | my_pong;
        return troupe::Nodelete;
    }
    troupe::allocation receive(pong&) {
        ++pongs;
        if (--left == 0) *sink | my_done;
        else send_ping();
        return troupe::Nodelete;
    }
    troupe::allocation receive(stop&) { return troupe::Finished; }
};

troupe::allocation sink_actor::receive(done&) {
    if (--left > 0) return troupe::Nodelete;
    for (auto& a : *all) a | bye;
    return troupe::Finished;
}

SAVINA_BENCH(big) {
    const long actors = info.size("actors", 120, 40);
    const long n = info.size("n", 8'000, 1'000);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    std::vector<big_actor> all(static_cast<std::size_t>(actors));
    sink_actor sink;
    sink.all = &all;
    sink.left = actors;
    for (long i = 0; i < actors; ++i) {
        auto& a = all[static_cast<std::size_t>(i)];
        a.all = &all;
        a.sink = &sink;
        a.rng = savina::lcg{static_cast<std::uint64_t>(i)};
        a.left = n;
        a.my_ping.from = &a;
    }
    for (auto& a : all) a.send_ping();
    sys.stop();
    const double s = t.seconds();
    long pongs = 0;
    for (auto& a : all) pongs += a.pongs;
    return {s, static_cast<std::uint64_t>(pongs)};
}

}  // namespace savina_big
