// Stop: waiting for every actor, time limits with a survivor report, an
// idle system parking its workers, statistics.
#include <chrono>
#include <memory>

#include "actor_fixture.hpp"

using namespace std::chrono_literals;
using troupe_test::on_workers;

namespace {

struct nudge : troupe::message {};

struct stubborn : troupe::actor {  // never finishes on its own
    int got = 0;
    troupe::allocation receive(nudge&) {
        ++got;
        return troupe::Nodelete;
    }
};
struct other_stubborn : troupe::actor {
    troupe::allocation receive(nudge&) { return troupe::Nodelete; }
};
struct waiting : troupe::actor {};

}  // namespace

TEST_CASE("stop_for gives up and names the survivors by type and count") {
    troupe_test::watchdog wd{"stop_for"};
    troupe::actor_system sys{2};
    auto a = std::make_unique<stubborn>();
    auto b = std::make_unique<stubborn>();
    auto c = std::make_unique<other_stubborn>();
    auto d = std::make_unique<waiting>();  // never messaged: type unknown
    nudge n;
    *a | n;
    *b | n;
    *c | n;
    troupe::stop_report r = sys.stop_for(50ms);
    CHECK_FALSE(r.finished);
    CHECK(r.live_actors == 4);
    REQUIRE(r.survivors.size() == 2);
    CHECK(r.survivors[0].count == 2);
    CHECK(r.survivors[0].type.find("stubborn") != std::string::npos);
    CHECK(r.survivors[1].count == 1);
    CHECK(r.survivors[1].type.find("other_stubborn") != std::string::npos);
    CHECK(r.never_messaged == 1);
    CHECK(r.to_string().find("4 actor(s) still alive") != std::string::npos);
    CHECK(sys.stopped());
    CHECK(a->got == 1);
}

TEST_CASE("stop_for returns a clean report when everything finishes in time") {
    on_workers([](std::size_t w) {
        troupe::actor_system sys{w};
        stubborn a;
        nudge n;
        a | n | troupe::finished_msg;
        troupe::stop_report r = sys.stop_for(60s);
        CHECK(r.finished);
        CHECK(r.survivors.empty());
        CHECK(r.to_string() == "every actor finished");
    });
}

TEST_CASE("stop blocks until the last actor finishes, then returns") {
    on_workers([](std::size_t w) {
        troupe::actor_system sys{w};
        struct slowpoke : troupe::actor {
            long left = troupe_test::scaled(200000L);
            troupe::allocation receive(nudge& n) {
                if (--left == 0) return troupe::Finished;
                *this | n;
                return troupe::Nodelete;
            }
        } s;
        nudge n;
        s | n;
        sys.stop();  // returns only after s finished
        CHECK(s.left == 0);
        CHECK(s.finished());
    });
}

TEST_CASE("an idle system parks every worker (no busy polling)") {
    on_workers([](std::size_t w) {
        troupe::actor_system sys{w};
        stubborn a;
        nudge n;
        a | n;
        // Every worker must end its spin budget and park: wait for that
        // state itself (no time bound; if a worker never parks, the
        // fixture's watchdog fails the test).
        while (sys.parked_workers() != w) troupe::this_thread::yield();
        CHECK(sys.parked_workers() == w);
        // Work arriving wakes the owner.
        a | n | troupe::finished_msg;
        sys.stop();
        CHECK(a.got == 2);
    });
}

TEST_CASE("statistics are counted in statistics builds and zero otherwise") {
    troupe::actor_system sys{2};
    stubborn a;
    nudge n;
    for (int i = 0; i < 100; ++i) a | n;
    a | troupe::finished_msg;
    sys.stop();
    auto s = sys.statistics();
#if defined(TROUPE_STATISTICS)
    CHECK(s.actors_created == 1);
    CHECK(s.messages_sent == 101);
    CHECK(s.messages_received == 101);
    CHECK(s.gulps >= 1);
    CHECK(s.gulped_messages == 101);
    CHECK(s.average_gulp() > 0);
#else
    CHECK(s.messages_sent == 0);
    CHECK(s.gulps == 0);
#endif
}
