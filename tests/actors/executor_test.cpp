// The executor workload: actors in groups, each receive sends to the next
// group member round-robin (Cforall test "executor"); ping-pong between two
// actors (Cforall test "pingpong").
#include <atomic>
#include <memory>
#include <vector>

#include "actor_fixture.hpp"
#include "leak_check.hpp"

using troupe_test::on_workers;
using troupe_test::scaled;

namespace {

struct token : troupe::message {};
token shared_token;

struct member : troupe::actor {
    member* gstart = nullptr;
    long set = 0, recs = 0, sends = 0, rounds = 0;
    troupe::allocation receive(token& m) {
        if (recs == rounds) return troupe::Finished;
        gstart[sends % set] | m;
        ++sends;
        ++recs;
        return troupe::Nodelete;
    }
};

// `actors` members in groups of `set` (each sends the token around its
// group `rounds` times per member), created on the running system and
// started: each is sent the shared token once.
std::unique_ptr<member[]> start_groups(long actors, long set, long rounds) {
    std::unique_ptr<member[]> a{new member[actors]};
    for (long i = 0; i < actors; ++i) {
        a[i].gstart = &a[i - i % set];
        a[i].set = set;
        a[i].rounds = set * rounds;
    }
    for (long i = 0; i < actors; ++i) a[i] | shared_token;
    return a;
}

struct ball : troupe::message {
    long count = 0;
};

struct player : troupe::actor {
    player* partner = nullptr;
    long limit = 0, hits = 0;
    int finishes = 0;
    troupe::allocation receive(ball& b) {
        ++hits;
        ++b.count;
        if (b.count < limit) {
            *partner | b;
            return troupe::Nodelete;
        }
        ++finishes;
        if (b.count == limit) *partner | b;  // once more, so the partner finishes too
        return troupe::Finished;
    }
};

}  // namespace

TEST_CASE("groups sending to every member: every message received, totals exact") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        const long actors = 1000, set = 20, rounds = scaled(50L);
        troupe::actor_system sys{w};
        auto a = start_groups(actors, set, rounds);
        sys.stop();
        long received = 0;
        for (long i = 0; i < actors; ++i) {
            CHECK(a[i].recs == set * rounds);
            CHECK(a[i].sends == set * rounds);
            CHECK(a[i].finished());
            received += a[i].recs + 1;  // +1: the receive that returned Finished
        }
        CHECK(received == actors * (set * rounds + 1));
    });
}

TEST_CASE("ping-pong: one message bounces, each actor finishes exactly once") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        player ping, pong;
        ping.partner = &pong;
        pong.partner = &ping;
        ping.limit = pong.limit = scaled(100000L);
        ball b;
        ping | b;
        sys.stop();
        CHECK(b.count == scaled(100000L) + 1);
        CHECK(ping.hits + pong.hits == scaled(100000L) + 1);
        CHECK(ping.finishes == 1);
        CHECK(pong.finishes == 1);
    });
}

TEST_CASE("explicit configurations: mailbox counts, uneven ranges, stealing off") {
    for (std::size_t mailboxes : {2u, 3u, 7u, 64u}) {
        CAPTURE(mailboxes);
        troupe_test::watchdog wd{"explicit configuration"};
        troupe::actor_system_config c;
        c.workers = 2;
        c.mailboxes = mailboxes;
        c.stealing = mailboxes % 2 == 0;
        troupe::actor_system sys{c};
        CHECK(sys.mailboxes() == mailboxes);
        CHECK(sys.workers() == 2);
        const long actors = 200, set = 10, rounds = scaled(20L);
        auto a = start_groups(actors, set, rounds);
        sys.stop();
        for (long i = 0; i < actors; ++i) CHECK(a[i].recs == set * rounds);
    }
}
