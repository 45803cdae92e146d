// The reply duty of requests received from another rank, as locally
// (troupe/request.hpp): a behaviour that replies or forwards and then
// throws leaves the request alone (the engine may already have shipped the
// reply and recycled the object for a later ask of the same type), the
// right reply reaches the asker, and the exception goes to the actor
// system's behaviour-exception handler. Every rank serves and asks the next.
#include <atomic>
#include <stdexcept>
#include <string>

#include "remote_fixture.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
namespace remote = troupe::remote;

struct compute : troupe::request<long> {
    long x = 0;
};
TROUPE_REMOTE_MESSAGE(compute, "test.duty.compute", &compute::x);

namespace {

// What the behaviours of one test case share on this rank.
struct shared_state {
    troupe::future<> second_arrived;  // the second request reached its server
    troupe::future<> handled;         // the behaviour-exception handler ran
    std::atomic<int> handler_calls{0};
    std::string handled_what;  // written by the handler before `handled`

    // Waits until the handler ran. With the reply duty kept it runs at
    // once; without it, it never runs, and the bound lets the test report
    // the wrong answer the asker got instead of hanging.
    void wait_handled() {
        troupe::waituntil(troupe::on(handled, [] {}) | troupe::on(troupe::timeout(5s), [] {}));
    }
    troupe::actor_system_config config() {
        troupe::actor_system_config cfg;
        cfg.workers = 2;  // two behaviours block at once below
        cfg.on_behaviour_exception = [this](const troupe::behaviour_exception& e) {
            handled_what = e.what;
            ++handler_calls;
            handled.fulfil();
            return troupe::Nodelete;
        };
        return cfg;
    }
};

// x == 1: replies, waits until the second request (built where the first
// one was: the inbound pool is LIFO) has arrived, then throws. Otherwise:
// announces its arrival and replies once the first one's exception was
// handled.
struct replier : troupe::actor {
    shared_state* st = nullptr;
    troupe::allocation receive(compute& q) {
        if (q.x == 1) {
            q.reply(10);
            st->second_arrived.get();
            throw std::runtime_error("failure after the reply to x=1");
        }
        st->second_arrived.fulfil();
        st->wait_handled();
        q.reply(q.x * 10);
        return troupe::Nodelete;
    }
};

// Replies x + 100 once the forwarder's exception was handled.
struct helper : troupe::actor {
    shared_state* st = nullptr;
    troupe::allocation receive(compute& q) {
        st->wait_handled();
        q.reply(q.x + 100);
        return troupe::Nodelete;
    }
};

// Forwards the request to its helper, then throws.
struct forwarder : troupe::actor {
    helper* h = nullptr;
    troupe::allocation receive(compute& q) {
        *h | q;
        throw std::runtime_error("failure after forwarding");
    }
};

}  // namespace

TEST_CASE("reply, then throw: the exception goes to the handler, not to a later ask") {
    remote::world& w = remote_test::world();
    shared_state st;
    {
        troupe::actor_system sys{st.config()};
        replier first, second;  // consecutive: on different workers
        first.st = second.st = &st;
        w.publish("duty.a1." + std::to_string(w.rank()), first);
        w.publish("duty.a2." + std::to_string(w.rank()), second);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        auto r1 = w.lookup<replier>(n, "duty.a1." + std::to_string(n));
        auto r2 = w.lookup<replier>(n, "duty.a2." + std::to_string(n));
        compute q1;
        q1.x = 1;
        CHECK(r1.ask(q1).get() == 10);
        compute q2;
        q2.x = 2;
        try {
            CHECK(r2.ask(q2).get() == 20);
        } catch (const remote::remote_exception& e) {
            FAIL_CHECK("the second ask got another ask's exception: " << e.what());
        }
        w.barrier();  // every rank has its answers
        first | troupe::finished_msg;
        second | troupe::finished_msg;
        w.stop(sys);
    }
    CHECK(st.handler_calls == 1);
    CHECK(st.handled_what == "failure after the reply to x=1");
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

TEST_CASE("forward, then throw: the helper's reply wins, the handler gets the exception") {
    remote::world& w = remote_test::world();
    shared_state st;
    {
        troupe::actor_system sys{st.config()};
        helper h;
        forwarder f;
        h.st = &st;
        f.h = &h;
        w.publish("duty.f." + std::to_string(w.rank()), f);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        auto rf = w.lookup<forwarder>(n, "duty.f." + std::to_string(n));
        compute q;
        q.x = 5;
        try {
            CHECK(rf.ask(q).get() == 105);
        } catch (const remote::remote_exception& e) {
            FAIL_CHECK("the asker got the forwarder's exception: " << e.what());
        }
        w.barrier();
        h | troupe::finished_msg;
        f | troupe::finished_msg;
        w.stop(sys);
    }
    CHECK(st.handler_calls == 1);
    CHECK(st.handled_what == "failure after forwarding");
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

namespace {
// Answers x * 3 (the remote end of a forward).
struct tripler : troupe::actor {
    troupe::allocation receive(compute& q) {
        q.reply(q.x * 3);
        return troupe::Nodelete;
    }
};
// Forwards each request it receives to a remote actor with ref.ask(q) (what
// the static_assert on `ref | q` recommends) and returns without replying.
struct set_target : troupe::message {
    remote::remote_ref<tripler> to;
};
struct remote_forwarder : troupe::actor {
    remote::remote_ref<tripler> to;
    troupe::allocation receive(set_target& m) {
        to = m.to;
        return troupe::Nodelete;
    }
    troupe::allocation receive(compute& q) {
        to.ask(q);
        return troupe::Nodelete;
    }
};
}  // namespace

TEST_CASE("forward with ref.ask(q) inside a behaviour: the remote reply answers the request") {
    remote::world& w = remote_test::world();
    remote_test::clear_network_errors();
    {
        troupe::actor_system sys{2};
        tripler t;
        remote_forwarder f;
        w.publish("duty.t." + std::to_string(w.rank()), t);
        w.publish("duty.rf." + std::to_string(w.rank()), f);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        set_target st;  // through the mailbox: ordered before the requests
        st.to = w.lookup<tripler>(n, "duty.t." + std::to_string(n));
        f | st;
        w.barrier();  // every forwarder knows its target before any request
        auto rf = w.lookup<remote_forwarder>(n, "duty.rf." + std::to_string(n));
        for (long i = 1; i <= 20; ++i) {
            compute local;  // a local request, forwarded to the next rank
            local.x = i;
            try {
                CHECK(troupe::ask(f, local).get() == 3 * i);
            } catch (const std::exception& e) {
                FAIL_CHECK("the local ask failed: " << e.what());
            }
            compute far;  // a request from another rank, forwarded again
            far.x = i;
            try {
                CHECK(rf.ask(far).get() == 3 * i);
            } catch (const std::exception& e) {
                FAIL_CHECK("the remote ask failed: " << e.what());
            }
        }
        w.barrier();
        t | troupe::finished_msg;
        f | troupe::finished_msg;
        w.stop(sys);
    }
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
