// Remote asks with a deadline (remote_ref::ask(q, deadline)): a held ask
// fails with request_error (timeout) naming the request, the actor and its
// rank; its reply, released later, is dropped and counted in the dump; a
// deadline already passed sends nothing; a reply in time wins; and replies
// racing their deadlines answer each ask once, with requests destroyed
// right after their answer.
#include <chrono>
#include <random>
#include <string>

#include "dump_text.hpp"
#include "remote_fixture.hpp"
#include "troupe/dump.hpp"
#include "troupe/thread.hpp"

namespace remote = troupe::remote;
using namespace std::chrono_literals;

struct held_q : troupe::request<long> {
    long x = 0;
};
TROUPE_REMOTE_MESSAGE(held_q, "test.deadline.held", &held_q::x);
struct release_held : troupe::message {};
TROUPE_REMOTE_MESSAGE(release_held, "test.deadline.release");
struct echo_q : troupe::request<long> {
    long x = 0;
};
TROUPE_REMOTE_MESSAGE(echo_q, "test.deadline.echo", &echo_q::x);

namespace {

struct server : troupe::actor {
    held_q* held = nullptr;
    troupe::allocation receive(held_q& q) {
        q.defer();  // answered on release_held
        held = &q;
        return troupe::Nodelete;
    }
    troupe::allocation receive(release_held&) {
        if (held) held->reply(held->x + 1);
        held = nullptr;
        return troupe::Nodelete;
    }
    troupe::allocation receive(echo_q& q) {
        q.reply(q.x);
        return troupe::Nodelete;
    }
};

using troupe_test::dump_now;
using troupe_test::has;

}  // namespace

TEST_CASE("a remote ask's deadline fails it, naming it; the late reply is dropped and counted") {
    remote::world& w = remote_test::world();
    troupe::actor_system sys{2};
    server s;
    w.publish("deadline.s." + std::to_string(w.rank()), s);
    w.barrier();
    const int n = (w.rank() + 1) % w.size();
    auto next = w.lookup<server>(n, "deadline.s." + std::to_string(n));

    {
        held_q q;
        q.x = 41;
        auto& f = next.ask(q, 20ms);
        try {
            (void)f.get();
            FAIL("the held ask did not time out");
        } catch (const troupe::request_error& e) {
            CHECK(e.why() == troupe::request_error::reason::timeout);
            const std::string what = e.what();
            CAPTURE(what);
            CHECK(has(what, "'test.deadline.held'"));
            CHECK(has(what, "server"));
            CHECK(has(what, "on rank " + std::to_string(n)));
            CHECK(has(what, "timed out"));
            CHECK(has(what, " ms after the ask)"));
        }
    }  // destroyed at once: the engine let go of it at the timeout
    CHECK(has(dump_now(), "remote asks timed out: 1 (late replies dropped: 0)"));
    // The server answers the held request now; its reply finds no ask.
    next | release_held{};
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    while (!has(dump_now(), "remote asks timed out: 1 (late replies dropped: 1)")) {
        REQUIRE(std::chrono::steady_clock::now() < give_up);
        troupe::this_thread::sleep_for(1ms);  // polls a condition; the assertion is above
    }

    // A deadline already passed: fails at once, nothing is sent. Between
    // barriers: this rank's server sends frames too (its late reply to the
    // rank before us, the answers to that rank's next asks), and one of
    // them between our two reads of the count failed this check once (ASan,
    // 3 ranks). Past the first barrier every late reply has been received
    // (each rank waited for its own above), so sent; the second keeps every
    // rank's next asks until all have read their counts.
    w.barrier();
    {
        const auto sent = w.frames_sent();
        echo_q q;
        q.x = 5;
        auto& f = next.ask(q, std::chrono::steady_clock::now() - 1ms);
        CHECK(w.frames_sent() == sent);
        try {
            (void)f.get();
            FAIL("an ask past its deadline did not fail");
        } catch (const troupe::request_error& e) {
            CHECK(e.why() == troupe::request_error::reason::timeout);
            CHECK(has(e.what(), "not sent: its deadline had already passed"));
        }
    }
    w.barrier();
    // A reply in time wins, and the deadline, disarmed, does nothing later.
    {
        echo_q q;
        q.x = 7;
        CHECK(next.ask(q, 60s).get() == 7);
    }
    CHECK(has(dump_now(), "remote asks timed out: 2 (late replies dropped: 1)"));
    CHECK(has(dump_now(), "remote asks outstanding (sent from this rank, no reply yet): 0\n"));

    w.barrier();
    s | troupe::finished_msg;
    w.stop(sys);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

TEST_CASE("remote replies racing their deadlines answer each ask once") {
    remote::world& w = remote_test::world();
    troupe::actor_system sys{2};
    server s;
    w.publish("deadline.race." + std::to_string(w.rank()), s);
    w.barrier();
    const int n = (w.rank() + 1) % w.size();
    auto next = w.lookup<server>(n, "deadline.race." + std::to_string(n));
    std::mt19937 rng{static_cast<unsigned>(w.rank() + 1)};
    const int asks = 300;
    int values = 0, timeouts = 0, wrong = 0;
    for (int i = 0; i < asks; ++i) {
        echo_q q;  // destroyed right after its answer, whichever it was
        q.x = i;
        auto& f = next.ask(q, std::chrono::microseconds(rng() % 400));
        try {
            if (f.get() == i) ++values;
            else ++wrong;
        } catch (const troupe::request_error& e) {
            if (e.why() == troupe::request_error::reason::timeout) ++timeouts;
            else ++wrong;
        }
    }
    CHECK(wrong == 0);
    CHECK(values + timeouts == asks);
    // Every late reply is dropped and counted, none answers twice: a last
    // ask without a deadline still gets its own value.
    echo_q last;
    last.x = -1;
    CHECK(next.ask(last).get() == -1);
    w.barrier();
    s | troupe::finished_msg;
    w.stop(sys);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
