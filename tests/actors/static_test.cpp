// Static sends: one actor, one message, many sends (Cforall test "static").
#include <atomic>

#include "actor_fixture.hpp"
#include "leak_check.hpp"

using troupe_test::on_workers;
using troupe_test::scaled;

namespace {

struct tick : troupe::message {};

// Re-sends the one message to itself until it has received `times`.
struct self_sender : troupe::actor {
    long count = 0, times = 0;
    troupe::allocation receive(tick& m) {
        if (++count == times) return troupe::Finished;
        *this | m;
        return troupe::Nodelete;
    }
};

// Counts what other threads send it.
struct counter : troupe::actor {
    long count = 0;
    troupe::allocation receive(tick&) {
        ++count;
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("one actor re-sends one message to itself: exact count") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        tick m;
        self_sender a;
        a.times = scaled(200000L);
        a | m;
        sys.stop();
        CHECK(a.count == scaled(200000L));
        CHECK(a.finished());
    });
}

TEST_CASE("many cascaded sends of one message from the main thread") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        tick m;
        counter c;
        const long n = scaled(50000L);
        for (long i = 0; i < n; ++i) c | m | m;  // cascaded: two per statement
        c | troupe::finished_msg;
        sys.stop();
        CHECK(c.count == 2 * n);
    });
}

TEST_CASE("the thesis's static program with thesis-style start/stop") {
    troupe_test::leak_check no_leaks;
    troupe::start_actor_system(2);
    tick m;
    self_sender a;
    a.times = scaled(100000L);
    a | m;
    troupe::stop_actor_system();
    CHECK(a.count == scaled(100000L));
}
