// Checked builds: each misuse the actors module detects produces a clear
// message naming the actor or message type. (Release builds compile the
// checks out; the tests then check that nothing is reported, or the one
// release behaviour: creating an actor with no system throws.)
#include <memory>
#include <stdexcept>

#include "actor_fixture.hpp"

using troupe_test::contains;
using troupe_test::misuse_recorder;

namespace {

struct note_msg : troupe::message {};

struct listener : troupe::actor {
    int got = 0;
    troupe::allocation receive(note_msg&) {
        ++got;
        return troupe::Nodelete;
    }
};

struct stopper : troupe::actor {
    troupe::actor_system* sys = nullptr;
    troupe::allocation receive(note_msg&) {
        sys->stop();  // would wait for itself
        return troupe::Finished;
    }
};

}  // namespace

TEST_CASE("sending to an actor that has finished, been destroyed or deleted") {
    misuse_recorder rec;
    troupe::actor_system sys{2};
    note_msg m;
    listener finished;
    finished | troupe::finished_msg;
    auto* deleted = new listener;
    *deleted | troupe::delete_msg;
    alignas(listener) unsigned char storage[sizeof(listener)];
    auto* destroyed = ::new (storage) listener;
    *destroyed | troupe::destroy_msg;
    sys.stop();  // all three ended
    troupe::actor_system sys2{1};
    if constexpr (!troupe::checked_build) {
        CHECK(rec.messages().empty());
        return;
    }
    finished | m;
    CHECK(contains(rec.last(), "listener"));
    CHECK(contains(rec.last(), "note_msg'"));
    CHECK(contains(rec.last(), "after it had finished"));
    *deleted | m;  // never dereferenced: caught by address
    CHECK(contains(rec.last(), "after it had been deleted"));
    *destroyed | m;
    CHECK(contains(rec.last(), "after it had been destroyed"));
    CHECK(rec.messages().size() == 3);
}

TEST_CASE("a message queued before its actor finished, delivered after") {
    misuse_recorder rec;
    troupe::actor_system sys{1};
    note_msg m;
    listener l;
    l | troupe::finished_msg | m;  // both queued while l is alive
    sys.stop();
    if constexpr (!troupe::checked_build) return;
    REQUIRE(rec.messages().size() == 1);
    CHECK(contains(rec.last(), "listener"));
    CHECK(contains(rec.last(), "note_msg'"));
    CHECK(contains(rec.last(), "delivered after it had finished"));
    CHECK(l.got == 0);
}

TEST_CASE("creating an actor with no running actor system") {
    misuse_recorder rec;
    REQUIRE(troupe::default_actor_system() == nullptr);
    if constexpr (!troupe::checked_build) {
        CHECK_THROWS_AS(listener{}, std::logic_error);
        return;
    }
    listener orphan;
    CHECK(contains(rec.last(), "listener"));
    CHECK(contains(rec.last(), "created with no running actor system"));
    note_msg m;
    orphan | m;  // reported, not sent
    CHECK(contains(rec.last(), "created with no running actor system"));
    CHECK(rec.messages().size() == 2);
}

TEST_CASE("an executor with fewer mailboxes than workers") {
    misuse_recorder rec;
    troupe::executor_config cfg;
    cfg.workers = 4;
    cfg.mailboxes = 2;
    cfg.name = "tiny";
    troupe::actor_system sys{cfg};
    CHECK(sys.mailboxes() == 4);  // repaired in every build
    if constexpr (!troupe::checked_build) return;
    CHECK(contains(rec.last(), "'tiny'"));
    CHECK(contains(rec.last(), "2 mailbox(es) for 4 workers"));
}

TEST_CASE("a message destroyed without ever being sent") {
    misuse_recorder rec;
    { note_msg never; }
    if constexpr (!troupe::checked_build) {
        CHECK(rec.messages().empty());
        return;
    }
    CHECK(contains(rec.last(), "note_msg'"));
    CHECK(contains(rec.last(), "destroyed without ever being sent"));
    // Sent ones, and the builtin poison pills, are fine.
    rec.messages();
    troupe::actor_system sys{1};
    {
        note_msg sent;
        listener l;
        l | sent | troupe::finished_msg;
        sys.stop();
    }
    CHECK(rec.messages().size() == 1);
}

TEST_CASE("stop called from one of the system's own behaviours") {
    misuse_recorder rec;
    troupe::actor_system sys{1};
    stopper s;
    s.sys = &sys;
    note_msg m;
    s | m;
    sys.stop();
    if constexpr (!troupe::checked_build) return;
    CHECK(contains(rec.last(), "stop called from one of its own behaviours"));
}
