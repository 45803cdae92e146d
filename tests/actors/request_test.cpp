// Request/reply: a future a non-actor thread waits on; exceptions from the
// behaviour reach the requester.
#include <stdexcept>
#include <string>

#include "actor_fixture.hpp"
#include "leak_check.hpp"

using troupe_test::on_workers;

namespace {

struct add : troupe::message {
    long n = 0;
};
struct get_total : troupe::request<long> {};
struct ping : troupe::request<> {};
struct fail : troupe::request<std::string> {};

struct account : troupe::actor {
    long total = 0;
    troupe::allocation receive(add& m) {
        total += m.n;
        return troupe::Nodelete;
    }
    troupe::allocation receive(get_total& q) {
        q.reply(total);
        return troupe::Nodelete;
    }
    troupe::allocation receive(ping& p) {
        p.reply();
        return troupe::Nodelete;
    }
    troupe::allocation receive(fail&) { throw std::runtime_error("overdrawn"); }
};

// Asks another actor from inside a behaviour and waits for the answer
// (ask flushes the request first; needs a second worker to answer).
struct auditor : troupe::actor {
    account* target = nullptr;
    long seen = -1;
    troupe::allocation receive(ping& p) {
        get_total q;
        seen = troupe::ask(*target, q).get();
        p.reply();
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("a plain thread waits for an actor's answer; messages before it are counted") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        account a;
        add one;
        one.n = 1;
        for (int i = 0; i < 1000; ++i) a | one;
        get_total q;
        CHECK(troupe::ask(a, q).get() == 1000);  // FIFO: after the adds
        q.reset();
        a | one;
        CHECK(troupe::ask(a, q).get() == 1001);
        a | troupe::finished_msg;
        sys.stop();
    });
}

TEST_CASE("an exception thrown by the behaviour reaches the requester; the actor keeps running") {
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{2};
    account a;
    fail f;
    CHECK_THROWS_WITH_AS(troupe::ask(a, f).get(), "overdrawn", std::runtime_error);
    ping p;
    troupe::ask(a, p).get();  // still alive and answering
    a | troupe::finished_msg;
    sys.stop();
}

TEST_CASE("user threads ask too (they park, their processor runs others)") {
    troupe_test::on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{2};
        account a;
        add two;
        two.n = 2;
        long results[4] = {};
        {
            troupe::thread t[4];
            for (int i = 0; i < 4; ++i)
                t[i] = troupe::thread{c, [&, i] {
                                          get_total q;
                                          a | two;
                                          results[i] = troupe::ask(a, q).get();
                                      }};
        }
        for (long r : results) CHECK((r >= 2 && r <= 8 && r % 2 == 0));
        a | troupe::finished_msg;
        sys.stop();
        CHECK(a.total == 8);
    });
}

TEST_CASE("a behaviour may wait for another actor's reply when another worker can answer") {
    troupe_test::watchdog wd{"nested ask"};
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{2};
    account a;
    auditor b;
    b.target = &a;
    add five;
    five.n = 5;
    a | five;
    ping p;
    troupe::ask(b, p).get();
    CHECK(b.seen == 5);
    a | troupe::finished_msg;
    b | troupe::finished_msg;
    sys.stop();
}

TEST_CASE("a behaviour blocked on an outside event does not hold up work queued behind it") {
    // Two actors in two mailboxes of worker 0 (grouped placement: the first
    // two creations, both in worker 0's first run, tickets 0 and 1). The first
    // blocks its worker until main says so; main says so only after the
    // second has answered: worker 1 must notice and steal that mailbox.
    troupe_test::watchdog wd{"blocked behaviour"};
    struct blocker : troupe::actor {
        troupe::future<void>* started = nullptr;
        troupe::future<void>* release = nullptr;
        troupe::allocation receive(ping& p) {
            started->fulfil();
            release->get();  // blocks this worker's kernel thread
            p.reply();
            return troupe::Finished;
        }
    };
    troupe::actor_system sys{2};
    blocker b;  // ticket 0
    account a;  // ticket 1: same worker's range
    troupe::future<void> started, release;
    b.started = &started;
    b.release = &release;
    ping pb, pa;
    auto& done = troupe::ask(b, pb);
    started.get();
    troupe::ask(a, pa).get();  // answered by the other worker
    release.fulfil();
    done.get();
    a | troupe::finished_msg;
    sys.stop();
}

namespace {

struct forgetful_q : troupe::request<int> {};
struct later_q : troupe::request<int> {};

// Forgets to answer one request; defers the other and answers it later.
struct forgetful : troupe::actor {
    later_q* kept = nullptr;
    void receive(forgetful_q&) {}  // neither reply, forward nor defer
    void receive(later_q& q) {
        q.defer();  // the documented way to answer after returning
        kept = &q;
    }
    void receive(ping& p) {
        kept->reply(7);  // a later message answers the deferred request
        p.reply();
    }
};

}  // namespace

TEST_CASE("a behaviour returning without answering a request fails the ask, naming both types") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        forgetful f;
        forgetful_q q;
        try {
            (void)troupe::ask(f, q).get();  // waited forever before
            FAIL("an unanswered request did not fail");
        } catch (const troupe::request_error& e) {
            CHECK(e.why() == troupe::request_error::reason::unanswered);
            const std::string what = e.what();
            CHECK(what.find("actor 'forgetful'") != std::string::npos);
            CHECK(what.find("request 'forgetful_q'") != std::string::npos);
            CHECK(what.find("defer()") != std::string::npos);
        }
        // defer() keeps the request open; the reply comes from a later receive.
        later_q l;
        auto& answer = troupe::ask(f, l);
        ping p;
        troupe::ask(f, p).get();
        CHECK(answer.get() == 7);
        f | troupe::finished_msg;
        sys.stop();
    });
}
