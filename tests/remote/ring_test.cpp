// A token ring across all ranks: one actor per rank passes a token to the
// next rank's actor for a number of laps; every pass is counted.
#include "remote_fixture.hpp"

namespace remote = troupe::remote;

struct token : troupe::message {
    long passes = 0;
    int origin = 0;
};
TROUPE_REMOTE_MESSAGE(token, "test.ring.token", &token::passes, &token::origin);
// Sent once around the ring after the last pass: each station finishes.
struct closing : troupe::message {
    int from = 0;
};
TROUPE_REMOTE_MESSAGE(closing, "test.ring.closing", &closing::from);

struct station : troupe::actor {
    remote::remote_ref<station> next;
    long limit = 0, seen = 0, last = -1;
    int rank = 0;
    bool ordered = true;
    troupe::allocation receive(token& t) {
        ++seen;
        if (t.passes <= last) ordered = false;
        last = t.passes;
        if (t.passes == limit) {
            closing c;
            c.from = rank;
            next | c;
            return troupe::Nodelete;
        }
        token n;
        n.passes = t.passes + 1;
        n.origin = t.origin;
        next | n;
        return troupe::Nodelete;
    }
    troupe::allocation receive(closing& c) {
        if (c.from != rank) next | c;  // c is encoded at once: forwarding it is fine
        return troupe::Finished;
    }
};

TEST_CASE("token ring across all ranks") {
    auto& w = remote_test::world();
    const long laps = 200;
    troupe::actor_system sys{1};
    station s;
    s.limit = laps * w.size();
    s.rank = w.rank();
    w.publish("ring.station", s);
    w.barrier();
    s.next = w.lookup<station>((w.rank() + 1) % w.size(), "ring.station");
    w.barrier();                          // every station knows the next before the token moves
    if (w.rank() == 0) s.next | token{};  // rank 1's station gets pass 0 (rank 0 itself when alone)
    w.stop(sys);
    CHECK(s.finished());
    CHECK(s.ordered);
    CHECK(remote_test::sum_over_ranks(s.seen) == s.limit + 1);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
