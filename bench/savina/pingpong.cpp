// Savina "PingPong": two actors pass a message back and forth N times
// (Ping sends, Pong answers). Each side keeps its one message object and
// sends it again: troupe messages go by reference, so a token that is
// never in two places at once needs no allocation. Check: pongs received.
#include "savina.hpp"

namespace savina_pingpong {

struct ping_actor;
struct ping_msg : troupe::message {
    ping_actor* from = nullptr;
};
struct pong_msg : troupe::message {};

struct pong_actor : troupe::actor {
    pong_msg pong;
    troupe::allocation receive(ping_msg& m);
};

struct ping_actor : troupe::actor {
    pong_actor* partner = nullptr;
    ping_msg ping;
    long left = 0, pongs = 0;
    troupe::allocation receive(pong_msg&) {
        ++pongs;
        if (--left == 0) {
            *partner | troupe::finished_msg;
            return troupe::Finished;
        }
        *partner | ping;
        return troupe::Nodelete;
    }
};

troupe::allocation pong_actor::receive(ping_msg& m) {
    *m.from | pong;
    return troupe::Nodelete;
}

SAVINA_BENCH(pingpong) {
    const long n = info.size("n", 1'000'000, 50'000);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    pong_actor pong;
    ping_actor ping;
    ping.partner = &pong;
    ping.left = n;
    ping.ping.from = &ping;
    pong | ping.ping;
    sys.stop();
    return {t.seconds(), static_cast<std::uint64_t>(ping.pongs)};
}

}  // namespace savina_pingpong
