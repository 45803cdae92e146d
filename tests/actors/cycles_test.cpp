// Start/stop cycles, several systems in one process, the default system,
// creation after the live count touched zero.
#include <atomic>
#include <memory>

#include "actor_fixture.hpp"

using troupe_test::scaled;

namespace {

struct work : troupe::message {
    long n = 0;
};

struct spinner : troupe::actor {
    long got = 0;
    troupe::allocation receive(work& w) {
        if (++got == w.n) return troupe::Finished;
        *this | w;
        return troupe::Nodelete;
    }
};

struct idle_child : troupe::actor {};

// Creates a child from a behaviour: the child joins the parent's system.
struct parent : troupe::actor {
    explicit parent(troupe::actor_system& s) : actor(s) {}
    idle_child* child = nullptr;
    troupe::future<void>* created = nullptr;
    troupe::allocation receive(work&) {
        child = new idle_child;
        created->fulfil();
        return troupe::Finished;
    }
};

}  // namespace

TEST_CASE("repeated start_actor_system / stop_actor_system cycles") {
    troupe_test::watchdog wd{"cycles"};
    for (int cycle = 0; cycle < 6; ++cycle) {
        CAPTURE(cycle);
        troupe::start_actor_system(static_cast<std::size_t>(1 + cycle % 3));
        REQUIRE(troupe::default_actor_system() != nullptr);
        work w;
        w.n = scaled(10000L);
        spinner s;
        s | w;
        troupe::stop_actor_system();
        CHECK(s.got == w.n);
        CHECK(troupe::default_actor_system() == nullptr);
    }
}

TEST_CASE("repeated RAII systems; stop with no actor ever created returns at once") {
    troupe_test::watchdog wd{"raii cycles"};
    for (int cycle = 0; cycle < 6; ++cycle) {
        troupe::actor_system sys{static_cast<std::size_t>(1 + cycle % 4)};
        CHECK(troupe::default_actor_system() == &sys);
        if (cycle % 2) {
            sys.stop();  // nothing was ever created
            CHECK(sys.stopped());
        }
    }  // the others stop in their destructors
}

TEST_CASE("two systems at once; actors join the system of the behaviour that creates them") {
    troupe_test::watchdog wd{"two systems"};
    troupe::actor_system sys1{2};  // the default
    troupe::actor_system sys2{2};
    CHECK(troupe::default_actor_system() == &sys1);
    struct in_sys2 : troupe::actor {
        explicit in_sys2(troupe::actor_system& s) : actor(s) {}
        long got = 0;
        troupe::allocation receive(work& w) {
            if (++got == w.n) return troupe::Finished;
            *this | w;
            return troupe::Nodelete;
        }
    };
    work w1, w2, go;
    w1.n = w2.n = scaled(20000L);
    spinner a;        // sys1 (default)
    in_sys2 b{sys2};  // sys2 (explicit)
    a | w1;
    b | w2;
    troupe::future<void> created;
    parent p{sys2};
    p.created = &created;
    p | go;
    created.get();
    // p's child was created by a sys2 behaviour, so it lives in sys2.
    *p.child | troupe::delete_msg;
    sys2.stop();
    CHECK(b.got == w2.n);
    CHECK(sys2.live_actors() == 0);
    sys1.stop();
    CHECK(a.got == w1.n);
}

TEST_CASE("actors created after the live count reached zero, before stop") {
    troupe_test::watchdog wd{"late creation"};
    troupe::actor_system sys{2};
    struct once : troupe::actor {
        troupe::future<void>* done = nullptr;
        troupe::allocation receive(work&) {
            done->fulfil();
            return troupe::Delete;
        }
    };
    work w;
    for (int round = 0; round < 20; ++round) {
        troupe::future<void> done;
        auto* o = new once;
        o->done = &done;
        *o | w;
        done.get();  // o is (about to be) gone; the next round starts from ~zero
    }
    sys.stop();
    CHECK(sys.live_actors() == 0);
}
