// The stop report says what it saw: a behaviour blocked in its mailbox is
// reported as such, with its actor named (not as "never sent a message",
// not as a forgotten poison pill); idle survivors with nothing queued are said to wait for a
// poison pill.
#include <atomic>
#include <chrono>
#include <string>

#include "actor_fixture.hpp"

using namespace std::chrono_literals;
using troupe_test::contains;

namespace {

struct block : troupe::message {};
struct blocker : troupe::actor {
    troupe::future<void>* gate = nullptr;
    troupe::future<void> inside;
    troupe::allocation receive(block&) {
        inside.fulfil();
        gate->get();  // blocks its (only) worker until the report came
        return troupe::Finished;
    }
};
struct idle_one : troupe::actor {
    void receive(block&) {}
};

troupe::stop_report seen;
std::atomic<bool> got{false};
troupe::future<void>* release_gate = nullptr;

}  // namespace

TEST_CASE("a stop report with a behaviour blocked says so, and guesses nothing") {
    troupe_test::watchdog w{"stop report, blocked behaviour"};
    troupe::future<void> gate;
    release_gate = &gate;
    troupe::actor_system_config cfg;
    cfg.workers = 1;
    cfg.stop_report_period = 20ms;
    cfg.on_stop_report = [](const troupe::stop_report& r) {
        if (got.exchange(true)) return;
        seen = r;
        release_gate->fulfil();  // lets the behaviour end: stop() completes
    };
    troupe::actor_system sys{cfg};
    blocker b;
    b.gate = &gate;
    block m;
    b | m;
    b.inside.get();
    sys.stop();
    REQUIRE(got.load());
    // The blocked worker's mailbox is read while the worker stays blocked:
    // its actor is named, nothing is left uninspected.
    CHECK(seen.busy_mailboxes == 0);
    CHECK(seen.never_messaged == 0);  // it was messaged: not claimed otherwise
    CHECK(seen.not_inspected == 0);
    REQUIRE(seen.survivors.size() == 1);
    CHECK(seen.survivors[0].type == "blocker");
    const std::string text = seen.to_string();
    CHECK(contains(text, "every worker (1) is blocked inside a behaviour"));
    CHECK(contains(text, "receiving 'block'"));
    CHECK(contains(text, "on future"));
    CHECK_FALSE(contains(text, "poison pill"));
    CHECK(text.find("1 never sent a message") == std::string::npos);
}

TEST_CASE("idle survivors with nothing queued: the report says they wait for a poison pill") {
    troupe_test::watchdog w{"stop report, idle survivors"};
    troupe::actor_system sys{2};
    idle_one a;
    block m;
    a | m;
    troupe::stop_report r = sys.stop_for(20ms);
    CHECK_FALSE(r.finished);
    CHECK(r.survivors.size() == 1);
    CHECK(r.never_messaged == 0);
    CHECK(r.busy_mailboxes == 0);
    CHECK(contains(r.to_string(), "poison pill"));
    CHECK(contains(r.to_string(), "1 x idle_one"));
}
