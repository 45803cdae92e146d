// A rank that destroys its published actors while other ranks still send to
// them (say, its main caught an exception and unwound): their
// later messages are dropped as messages for an actor that is gone, each
// reported once on the receiving rank (world_options::on_gone) naming the
// actor's published name and type and the message type, an ask fails at
// the asker with actor_gone, and nothing is blamed on the network. Every
// rank destroys its own actor and sends to the next rank's.
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "remote_fixture.hpp"
#include "troupe/error.hpp"

namespace remote = troupe::remote;

struct gone_note : troupe::message {
    int n = 0;
};
TROUPE_REMOTE_MESSAGE(gone_note, "test.gone.note", &gone_note::n);
struct gone_ping : troupe::request<int> {};
TROUPE_REMOTE_MESSAGE(gone_ping, "test.gone.ping");
struct gone_quit : troupe::message {};
TROUPE_REMOTE_MESSAGE(gone_quit, "test.gone.quit");

namespace {

struct victim : troupe::actor {
    troupe::allocation receive(gone_note&) { return troupe::Nodelete; }
    troupe::allocation receive(gone_ping& q) {
        q.reply(1);
        return troupe::Nodelete;
    }
    troupe::allocation receive(gone_quit&) { return troupe::Finished; }
};

// Misuse reports of this rank (a live actor destroyed: checked builds say so).
std::atomic<int> misuse_reports{0};
void count_misuse(std::string_view) { misuse_reports.fetch_add(1); }

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// Checks the reports of `notes` dropped notes from rank `from` for the
// actor published as `name`, which `how` ("was destroyed", "has finished").
void check_reports(const std::string& name, int from, int notes, const std::string& how) {
    auto reports = remote_test::gone_reports();
    CHECK(reports.size() == std::size_t(notes));
    for (const remote::actor_gone& e : reports) {
        const std::string what = e.what();
        CAPTURE(what);
        CHECK(e.actor_name() == name);
        CHECK(contains(e.actor_type(), "victim"));
        CHECK(e.message_type() == "test.gone.note");
        CHECK(e.rank() == remote_test::world().rank());
        CHECK(contains(what, "\"" + name + "\""));
        CHECK(contains(what, "victim"));
        CHECK(contains(what, "\"test.gone.note\""));
        CHECK(contains(what, "from rank " + std::to_string(from)));
        CHECK(contains(what, how));
    }
}

}  // namespace

TEST_CASE("an actor destroyed while others send to it: dropped as gone, not bad input") {
    remote::world& w = remote_test::world();
    remote_test::clear_network_errors();
    remote_test::clear_gone_reports();
    const int n = (w.rank() + 1) % w.size();
    const int prev = (w.rank() + w.size() - 1) % w.size();
    const std::string mine = "gone.v." + std::to_string(w.rank());
    const std::string theirs = "gone.v." + std::to_string(n);
    {
        troupe::actor_system sys{2};
        auto v = std::make_unique<victim>();  // on the heap: ASan sees any later use
        w.publish(mine, *v);
        w.barrier();
        auto next = w.lookup<victim>(n, theirs);
        gone_ping p;
        CHECK(next.ask(p).get() == 1);  // reachable while alive
        next | gone_note{};             // before the barrier: delivered (FIFO with the ask below)
        gone_ping p2;
        CHECK(next.ask(p2).get() == 1);  // the note was delivered before this reply
        w.barrier();                     // every rank's victim got its note
        // A local ask last: its reply orders the workers' earlier runs of
        // the victim before the destruction below in a way ThreadSanitizer
        // sees (the chain through the other rank's reply and the barrier
        // runs inside MPI, which it does not instrument).
        gone_ping mine_last;
        CHECK(troupe::ask(*v, mine_last).get() == 1);

        // As a main unwinding from an exception would: the live actor goes.
        const troupe::misuse_handler old = troupe::set_misuse_handler(&count_misuse);
        v.reset();
        troupe::set_misuse_handler(old);
        if constexpr (troupe::checked_build) CHECK(misuse_reports.load() == 1);
        w.barrier();  // every rank's victim is gone

        for (int i = 0; i < 3; ++i) next | gone_note{};
        gone_ping late;
        try {
            next.ask(late).get();
            FAIL("the ask to a destroyed actor did not fail");
        } catch (const remote::actor_gone& e) {
            const std::string what = e.what();
            CAPTURE(what);
            CHECK(e.rank() == n);
            CHECK(e.actor_name() == theirs);
            CHECK(contains(e.actor_type(), "victim"));
            CHECK(e.message_type() == "test.gone.ping");
            CHECK(contains(what, "was destroyed"));
            CHECK(contains(what, "\"" + theirs + "\""));
        }
        // The name is free again: a lookup says it is not published.
        CHECK_THROWS_AS(w.lookup<victim>(n, theirs), remote::lookup_error);
        w.barrier();  // every rank's failed ask came back: the notes before it were handled
        w.stop(sys);
    }
    check_reports(mine, prev, 3, "was destroyed");
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

TEST_CASE("an actor that finished while others send to it: dropped as gone, not bad input") {
    remote::world& w = remote_test::world();
    remote_test::clear_network_errors();
    remote_test::clear_gone_reports();
    const int n = (w.rank() + 1) % w.size();
    const int prev = (w.rank() + w.size() - 1) % w.size();
    const std::string mine = "gone.f." + std::to_string(w.rank());
    const std::string theirs = "gone.f." + std::to_string(n);
    {
        troupe::actor_system sys{2};
        victim v;
        w.publish(mine, v);
        w.barrier();
        auto next = w.lookup<victim>(n, theirs);
        gone_quit quit;
        v | quit;
        // Until the worker has ended it (an atomic read; bounded by the
        // test watchdog).
        while (!v.finished()) std::this_thread::yield();
        w.barrier();  // every rank's victim has finished
        for (int i = 0; i < 2; ++i) next | gone_note{};
        gone_ping late;
        CHECK_THROWS_WITH_AS(next.ask(late).get(), doctest::Contains("has finished"),
                             remote::actor_gone);
        w.barrier();
        w.stop(sys);
    }
    check_reports(mine, prev, 2, "has finished");
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
