// Savina "Thread Ring": A actors in a ring pass one token N hops; the
// actor that receives it with no hops left sends an exit round the ring.
// The token is one message object passed on (by reference). Check: the
// index of the actor where the token stopped, plus N.
#include <vector>

#include "savina.hpp"

namespace savina_threadring {

struct token : troupe::message {
    long hops = 0;
};
struct exit_msg : troupe::message {};

struct ring_actor : troupe::actor {
    ring_actor* next = nullptr;
    long id = 0;
    long* stopped_at = nullptr;
    exit_msg* bye = nullptr;  // one object for the whole ring
    troupe::allocation receive(token& t) {
        if (t.hops == 0) {
            *stopped_at = id;
            *next | *bye;
            return troupe::Nodelete;
        }
        --t.hops;
        *next | t;
        return troupe::Nodelete;
    }
    troupe::allocation receive(exit_msg& m) {
        // The exit goes once round, back to the actor that sent it.
        if (id != *stopped_at) *next | m;
        return troupe::Finished;
    }
};

SAVINA_BENCH(threadring) {
    const long actors = info.size("actors", 100, 100);
    const long n = info.size("n", 1'000'000, 100'000);
    troupe::actor_system sys{savina::config(info)};
    long stopped_at = -1;
    exit_msg bye;
    bench::stopwatch t;
    std::vector<ring_actor> ring(static_cast<std::size_t>(actors));
    for (long i = 0; i < actors; ++i) {
        auto& a = ring[static_cast<std::size_t>(i)];
        a.id = i;
        a.next = &ring[static_cast<std::size_t>((i + 1) % actors)];
        a.stopped_at = &stopped_at;
        a.bye = &bye;
    }
    token tok;
    tok.hops = n;
    ring[0] | tok;
    sys.stop();
    return {t.seconds(), static_cast<std::uint64_t>(stopped_at + n)};
}

}  // namespace savina_threadring
