// An actor's request/reply future is an ordinary waituntil clause: a plain
// thread (main, a troupe user thread) waits for the first of several actors'
// answers, for all of them, or gives up on a timeout.
#include <chrono>
#include <stdexcept>

#include "fixture.hpp"
#include "troupe/actors.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
using troupe::on;
using troupe::waituntil;

namespace {
struct square : troupe::request<long> {
    long n = 0;
};
// Holds a request without answering until told to (a slow actor).
struct hold : troupe::request<long> {};
// Sent from the heap and deleted by the executor: the sleeper's reply to
// `hold` (inside this receive) lets main end the round before the executor
// is done with the release message, so it must not live in main's frame.
struct release_msg : troupe::message {
    release_msg() : troupe::message(troupe::Delete) {}
};

struct squarer : troupe::actor {
    troupe::allocation receive(square& q) {
        if (q.n < 0) throw std::domain_error("negative");
        q.reply(q.n * q.n);
        return troupe::Nodelete;
    }
};
struct sleeper : troupe::actor {
    hold* held = nullptr;
    troupe::allocation receive(hold& q) {
        q.defer();  // answered by a later receive (else the ask would fail)
        held = &q;
        return troupe::Nodelete;
    }
    troupe::allocation receive(release_msg&) {
        if (held) held->reply(-1);
        held = nullptr;
        return troupe::Nodelete;
    }
};
}  // namespace

TEST_CASE("waiting on actors' replies: first of several, all of them, or a timeout") {
    troupe::actor_system sys{2};
    squarer a, b;
    sleeper s;
    for (int round = 0; round < 50; ++round) {
        square qa, qb;
        qa.n = 3;
        qb.n = 4;
        hold qs;
        // First answer of three, from main (an OS thread); the sleeper's
        // future never completes here, so an answer or the timeout wins.
        long first = 0;
        auto r = waituntil(on(troupe::ask(a, qa), [&] { first = qa.result().get(); }) |
                           on(troupe::ask(b, qb), [&] { first = qb.result().get(); }) |
                           on(troupe::ask(s, qs)) | on(troupe::timeout(1h)));
        CHECK(r.count() == 1);
        CHECK((r.index() == 0 || r.index() == 1));
        CHECK((first == 9 || first == 16));
        // Both answers, from a troupe user thread.
        long both = 0;
        troupe::thread t{[&] {
            waituntil(on(qa.result(), [&] { both += qa.result().get(); }) &
                      on(qb.result(), [&] { both += qb.result().get(); }));
        }};
        t.join();
        CHECK(both == 25);
        // The sleeper does not answer: the timeout ends the wait.
        CHECK(waituntil(on(qs.result()) | on(troupe::timeout(2ms))).index() == 1);
        s | *new release_msg;
        CHECK(qs.result().get() == -1);
    }
    // A behaviour's exception arrives through the clause's future.
    square bad;
    bad.n = -1;
    CHECK_THROWS_AS(waituntil(on(troupe::ask(a, bad), [&] { bad.result().get(); })),
                    std::domain_error);
    a | troupe::finished_msg;
    b | troupe::finished_msg;
    s | troupe::finished_msg;
    sys.stop();
}
