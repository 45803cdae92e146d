// Naming: lookups that succeed, typos and type mismatches (clear errors
// naming both sides), the future-returning form, duplicate names.
#include "remote_fixture.hpp"

namespace remote = troupe::remote;

struct ping : troupe::message {};
TROUPE_REMOTE_MESSAGE(ping, "test.lookup.ping");

struct teller : troupe::actor {
    int pings = 0;
    troupe::allocation receive(ping&) {
        ++pings;
        return troupe::Finished;  // each rank's teller gets one ping
    }
};
struct vault : troupe::actor {
    troupe::allocation receive(ping&) { return troupe::Nodelete; }
};

static bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

TEST_CASE("lookup: found, typo, wrong type, async, duplicate") {
    auto& w = remote_test::world();
    troupe::actor_system sys{1};
    teller t;
    vault v;
    w.publish("lookup.teller", t);
    w.publish("lookup.vault", v);
    CHECK_THROWS_AS(w.publish("lookup.teller", v), std::invalid_argument);
    w.barrier();
    const int other = (w.rank() + 1) % w.size();

    auto ref = w.lookup<teller>(other, "lookup.teller");
    CHECK(ref.valid());
    CHECK(ref.rank() == other);
    ref | ping{};

    try {
        (void)w.lookup<teller>(other, "lookup.teler");
        FAIL("a typo must not resolve");
    } catch (const remote::lookup_error& e) {
        const std::string m = e.what();
        CAPTURE(m);
        CHECK(contains(m, "\"lookup.teler\""));
        CHECK(contains(m, "rank " + std::to_string(other)));
        CHECK(contains(m, "teller"));             // the requested type
        CHECK(contains(m, "\"lookup.teller\""));  // what is published there
    }
    try {
        (void)w.lookup<teller>(other, "lookup.vault");
        FAIL("a type mismatch must not resolve");
    } catch (const remote::lookup_error& e) {
        const std::string m = e.what();
        CAPTURE(m);
        CHECK(contains(m, "\"lookup.vault\""));
        CHECK(contains(m, "of type vault"));
        CHECK(contains(m, "requested type teller"));
        CHECK(contains(m, "rank " + std::to_string(other)));
    }
    auto f = w.lookup_async<vault>(other, "lookup.vault");
    auto bad = w.lookup_async<vault>(other, "nope");
    CHECK(f->get().rank() == other);
    CHECK_THROWS_AS(bad->get(), remote::lookup_error);
    CHECK_THROWS_AS((void)w.lookup<vault>(w.size(), "x"), std::out_of_range);
    CHECK_THROWS_AS(remote::remote_ref<vault>{}.send(ping{}), std::logic_error);

    v | troupe::finished_msg;  // nothing is ever sent to a vault
    w.stop(sys);
    CHECK(t.pings == 1);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
