// The remote section of troupe::dump: a rank's dump counts the
// asks it awaits from other ranks and the requests it owes them, while
// they are outstanding, and not after. Every rank asks the next one; the
// server defers its reply until the asker has looked at its dump.
#include <string>

#include "dump_text.hpp"
#include "remote_fixture.hpp"
#include "troupe/dump.hpp"

namespace remote = troupe::remote;

struct held_ask : troupe::request<long> {
    long x = 0;
};
TROUPE_REMOTE_MESSAGE(held_ask, "test.dump.held_ask", &held_ask::x);
struct answer_now : troupe::message {};
TROUPE_REMOTE_MESSAGE(answer_now, "test.dump.answer_now");

namespace {

using troupe_test::dump_now;
using troupe_test::has;

struct server : troupe::actor {
    held_ask* held = nullptr;
    troupe::future<> holding;  // fulfilled once the request is held
    troupe::allocation receive(held_ask& q) {
        q.defer();  // answered on answer_now
        held = &q;
        holding.fulfil();
        return troupe::Nodelete;
    }
    troupe::allocation receive(answer_now&) {
        if (held) held->reply(held->x + 1);
        held = nullptr;
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("the dump counts a rank's outstanding remote asks and the requests it owes") {
    remote::world& w = remote_test::world();
    const std::string asks_line = "remote asks outstanding (sent from this rank, no reply yet): ";
    const std::string owed_line = "requests from other ranks not yet replied to: ";
    troupe::actor_system sys{2};
    server s;
    w.publish("dump.s." + std::to_string(w.rank()), s);
    w.barrier();
    const std::string before = dump_now();
    CHECK(has(before, "troupe-remote: rank " + std::to_string(w.rank()) + " of " +
                          std::to_string(w.size())));
    CHECK(has(before, asks_line + "0\n"));
    CHECK(has(before, "published actors: 1\n"));
    const int n = (w.rank() + 1) % w.size();
    auto next = w.lookup<server>(n, "dump.s." + std::to_string(n));
    held_ask q;
    q.x = 41;
    auto& reply = next.ask(q);
    // Our ask waits for our answer_now, not sent yet; our server holds the
    // previous rank's request until that rank sends its answer_now, which
    // every rank does only after the barrier that follows its dump.
    s.holding.get();
    const std::string held = dump_now();
    CHECK(has(held, asks_line + "1\n"));
    CHECK(has(held, owed_line + "1\n"));
    w.barrier();
    answer_now go;
    next.send(go);
    CHECK(reply.get() == 42);
    CHECK(has(dump_now(), asks_line + "0\n"));
    w.barrier();  // every rank's server has answered
    s | troupe::finished_msg;
    w.stop(sys);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
