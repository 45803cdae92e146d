// Ping-pong between pairs of ranks (0-1, 2-3; an odd last rank plays
// against itself through the engine's loop-back): every hit is counted.
#include <atomic>

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
    // Set by main once peer and solo are written, before the barrier after
    // which balls fly. The barrier's order reaches this rank through MPI,
    // which TSan cannot see; the release/acquire pair makes main's writes
    // visible to it too (it reported them as racing with receive once).
    std::atomic<bool> set_up{false};
    bool early = false;  // a ball came before main said set_up
    troupe::allocation receive(ball& b) {
        if (!set_up.load(std::memory_order_acquire)) early = true;
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
        me.set_up.store(true, std::memory_order_release);
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
        CHECK_FALSE(me.early);
        // A pair exchanges limit + 1 balls (hits 0..limit).
        const long total = remote_test::sum_over_ranks(me.received);
        const long pairs = w.size() / 2, solo = w.size() % 2;
        CHECK(total == (pairs + solo) * (limit + 1));
    }
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
