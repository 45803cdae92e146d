// A message that reaches a published actor while it finishes:
// the engine checks finished() and then appends the message, so an actor
// that ends between the two gets it queued behind its end. Made
// deterministic here: the actor is busy in a behaviour with the poison
// pill queued behind it (not finished yet, so the engine's check passes
// and the message lands behind the pill), and a second actor, told after
// the ask on the same rank pair (FIFO), releases it. The outcome must be
// the local one (docs/actors.md): no behaviour runs on the finished actor,
// a tell is dropped, an ask fails at the asker with an error naming the
// request and the finished actor, and nothing is blamed on the network.
#include <atomic>
#include <string>

#include "remote_fixture.hpp"

namespace remote = troupe::remote;

struct late_ask : troupe::request<int> {};
TROUPE_REMOTE_MESSAGE(late_ask, "test.finishing.late_ask");
struct late_note : troupe::message {};
TROUPE_REMOTE_MESSAGE(late_note, "test.finishing.late_note");
struct release_it : troupe::message {};
TROUPE_REMOTE_MESSAGE(release_it, "test.finishing.release");

namespace {

struct hold : troupe::message {};

struct ending : troupe::actor {
    troupe::future<>* go = nullptr;
    std::atomic<int> ran_after{0};  // behaviours for the late messages that ran
    troupe::allocation receive(hold&) {
        go->get();  // busy until released; the pill waits behind us
        return troupe::Nodelete;
    }
    troupe::allocation receive(late_ask& q) {
        ran_after.fetch_add(1);
        q.reply(1);
        return troupe::Nodelete;
    }
    troupe::allocation receive(late_note&) {
        ran_after.fetch_add(1);
        return troupe::Nodelete;
    }
};

struct releaser : troupe::actor {
    troupe::future<>* go = nullptr;
    troupe::allocation receive(release_it&) {
        go->fulfil();
        return troupe::Nodelete;
    }
};

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("messages queued behind a published actor's end are dropped; the ask fails clearly") {
    remote::world& w = remote_test::world();
    remote_test::clear_network_errors();
    troupe::future<> go;
    hold h;
    {
        troupe::actor_system sys{2};
        ending e;
        releaser r;
        e.go = r.go = &go;
        e | h | troupe::finished_msg;  // e is busy in h; its end is queued
        w.publish("finishing.e." + std::to_string(w.rank()), e);
        w.publish("finishing.r." + std::to_string(w.rank()), r);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        auto next_e = w.lookup<ending>(n, "finishing.e." + std::to_string(n));
        auto next_r = w.lookup<releaser>(n, "finishing.r." + std::to_string(n));
        late_note note;
        next_e.send(note);
        late_ask q;
        auto& reply = next_e.ask(q);
        release_it rel;
        next_r.send(rel);  // after the ask on the same pair: e is released once both wait
        std::string what;
        try {
            (void)reply.get();
            FAIL_CHECK("the ask to a finished actor was answered");
        } catch (const std::exception& x) {
            what = x.what();
        }
        CAPTURE(what);
        CHECK(contains(what, "late_ask"));
        CHECK(contains(what, "finished"));
        w.barrier();  // every rank's late messages were handled
        r | troupe::finished_msg;
        w.stop(sys);
        CHECK(e.ran_after.load() == 0);
    }
    for (auto& err : remote_test::network_errors()) FAIL_CHECK(err);
}
