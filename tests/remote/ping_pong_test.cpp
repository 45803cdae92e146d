// Ping-pong between pairs of ranks (0-1, 2-3; an odd last rank plays
// against itself through the engine's loop-back): every hit is counted.
#include "remote_fixture.hpp"

using namespace std::chrono_literals;
namespace remote = troupe::remote;

struct ball : troupe::message {
    int hits = 0;
};
TROUPE_REMOTE_MESSAGE(ball, "test.ping_pong.ball", &ball::hits);

struct player : troupe::actor {
    remote::remote_ref<player> peer;
    int limit = 0;
    int received = 0;
    bool solo = false;  // plays against itself
    int last = -1;
    bool in_order = true;
    troupe::allocation receive(ball& b) {
        ++received;
        // Each side sees every other hit (every hit when solo), in order.
        const int step = solo ? 1 : 2;
        if (last == -1 ? b.hits > 1 : b.hits != last + step) in_order = false;
        last = b.hits;
        if (b.hits >= limit) {
            if (!solo) peer | troupe::finished_msg;  // the other side stops too
            return troupe::Finished;
        }
        ball next;
        next.hits = b.hits + 1;
        peer | next;
        return troupe::Nodelete;
    }
};

static int partner(int rank, int size) {
    int p = rank ^ 1;
    return p < size ? p : rank;
}

TEST_CASE("ping-pong between pairs of ranks") {
    auto& w = remote_test::world();
    for (int round = 0; round < 3; ++round) {
        CAPTURE(round);
        const int limit = 1000;
        troupe::actor_system sys{2};
        player me;
        me.limit = limit;
        const std::string name = "pp." + std::to_string(round) + "." + std::to_string(w.rank());
        w.publish(name, me);
        w.barrier();
        const int other = partner(w.rank(), w.size());
        me.peer =
            w.lookup<player>(other, "pp." + std::to_string(round) + "." + std::to_string(other));
        me.solo = other == w.rank();
        w.barrier();  // every player is set up before any ball flies
        if (me.solo) {
            ball first;
            me.peer | first;  // against itself: it plays both sides
        } else if (w.rank() < other) {
            ball first;
            me.peer | first;
        }
        w.stop(sys);
        CHECK(me.finished());
        CHECK(me.in_order);
        // A pair exchanges limit + 1 balls (hits 0..limit).
        const long total = remote_test::sum_over_ranks(me.received);
        const long pairs = w.size() / 2, solo = w.size() % 2;
        CHECK(total == (pairs + solo) * (limit + 1));
    }
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
