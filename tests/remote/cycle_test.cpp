// Request cycles across ranks: behaviours that wait inside their receive on
// remote asks around the ranks (x0 -> x1 -> ... -> x0) are named in each
// rank's dump, with every actor's name and rank; through local asks on the
// way too (x0 -> l0 -> x1 -> l1 -> x0). A chain that ends in a wait that is
// no ask (a request held by an idle actor) is never called a cycle, though
// probes went along it. Each cycle is broken by the deadline of rank 0's
// ask, so the test ends.
#include <chrono>
#include <sstream>
#include <string>

#include "dump_text.hpp"
#include "remote_fixture.hpp"
#include "scale.hpp"
#include "troupe/dump.hpp"
#include "troupe/thread.hpp"

namespace remote = troupe::remote;
using namespace std::chrono_literals;

struct hop_q : troupe::request<int> {
    int n = 0;
};
TROUPE_REMOTE_MESSAGE(hop_q, "test.cycle.hop", &hop_q::n);

namespace {

// How long rank 0's ask waits before it breaks the cycle: the dumps must
// name it well before (a cycle is named about two probe intervals, 0.1 s,
// after it forms; sanitizer builds, on a loaded machine, get more time).
const std::chrono::milliseconds breaker{troupe_test::sanitized ? 10000 : 4000};
const std::chrono::milliseconds look_for = breaker - std::chrono::milliseconds(500);

const char* const x_names[] = {"x0", "x1", "x2", "x3"};
const char* const l_names[] = {"l0", "l1", "l2", "l3"};

using troupe_test::dump_now;
using troupe_test::has;

struct local_hop;

// On rank 0 the first hop_q starts the cycle (its ask has a deadline: the
// breaker) and later ones are answered at once; elsewhere each hop_q is
// passed on and waited for.
struct ring_actor : troupe::actor {
    int rank = 0;
    remote::remote_ref<ring_actor> next;
    local_hop* via = nullptr;  // the mixed case: ask this local actor instead
    bool started = false;
    hop_q inner;
    int forward(int n);
    void receive(hop_q& q) {
        if (rank == 0 && started) {
            q.reply(0);
            return;
        }
        started = true;
        q.reply(forward(q.n));
    }
};

// The mixed case's local hop: asks the next rank's ring actor.
struct local_hop : troupe::actor {
    remote::remote_ref<ring_actor> next;
    hop_q inner;
    bool deadline = false;
    void receive(hop_q& q) {
        inner.reset();
        inner.n = q.n + 1;
        try {
            q.reply((deadline ? next.ask(inner, breaker) : next.ask(inner)).get() + 1);
        } catch (const troupe::request_error&) {
            q.reply(-1);  // the breaker
        }
    }
};

int ring_actor::forward(int n) {
    if (via) {
        hop_q local;
        local.n = n;
        return troupe::ask(*via, local).get();
    }
    inner.reset();
    inner.n = n + 1;
    try {
        return (rank == 0 ? next.ask(inner, breaker) : next.ask(inner)).get() + 1;
    } catch (const troupe::request_error&) {
        return -1;  // the breaker
    }
}

// Polls this rank's dump until it names the cycle through every rank's
// actors (`names` on each rank), or `look_for` has passed.
std::string wait_for_cycle(const char* const* names, const char* type, int size) {
    const auto give_up = std::chrono::steady_clock::now() + look_for;
    std::string text;
    for (;;) {
        text = dump_now();
        bool all = has(text, "request cycle across ranks: ");
        for (int r = 0; r < size; ++r)
            all = all && has(text, "actor '" + std::string(names[r]) + "' (" + type + ") on rank " +
                                       std::to_string(r));
        if (all || std::chrono::steady_clock::now() >= give_up) return text;
        troupe::this_thread::sleep_for(2ms);  // polls a condition; the assertion follows
    }
}

}  // namespace

TEST_CASE("a request cycle around the ranks is named in every rank's dump") {
    remote::world& w = remote_test::world();
    troupe::actor_system sys{2};
    const int r = w.rank(), n = w.size();
    ring_actor x;
    x.rank = r;
    x.set_name(x_names[r]);
    w.publish("cycle.x." + std::to_string(r), x);
    w.barrier();
    x.next = w.lookup<ring_actor>((r + 1) % n, "cycle.x." + std::to_string((r + 1) % n));
    w.barrier();
    hop_q start;
    troupe::future<int>* answer = nullptr;
    if (r == 0) answer = &troupe::ask(x, start);

    const std::string text = wait_for_cycle(x_names, "ring_actor", n);
    CAPTURE(text);
    CHECK(has(text, "request cycle across ranks: actor '" + std::string(x_names[r]) +
                        "' (ring_actor) on rank " + std::to_string(r)));
    for (int k = 0; k < n; ++k)
        CHECK(has(text, "actor '" + std::string(x_names[k]) + "' (ring_actor) on rank " +
                            std::to_string(k)));
    CHECK(has(text, "waits for the reply to its remote ask 'test.cycle.hop'"));
    if (r == 0) CHECK(has(text, "(an ask with a deadline)"));

    w.barrier();
    if (r == 0) CHECK(answer->get() == -1);  // broken by the deadline
    // Every behaviour of the ring has returned once its own actor answers
    // (its mailbox is FIFO): x0 at once, the others around the ring to x0.
    hop_q after;
    CHECK(troupe::ask(x, after).get() == (r == 0 ? 0 : n - r));
    w.barrier();
    x | troupe::finished_msg;
    w.stop(sys);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

TEST_CASE("a request cycle through local asks on each rank is named with every actor") {
    remote::world& w = remote_test::world();
    if (w.size() != 2) return;  // np2 only (the 3-rank ring is above)
    troupe::actor_system sys{3};
    const int r = w.rank(), n = w.size();
    ring_actor x;
    local_hop l;
    x.rank = r;
    x.via = &l;
    l.deadline = r == 0;
    x.set_name(x_names[r]);
    l.set_name(l_names[r]);
    w.publish("cycle.mixed." + std::to_string(r), x);
    w.barrier();
    l.next = w.lookup<ring_actor>((r + 1) % n, "cycle.mixed." + std::to_string((r + 1) % n));
    w.barrier();
    hop_q start;
    troupe::future<int>* answer = nullptr;
    if (r == 0) answer = &troupe::ask(x, start);

    const std::string text = wait_for_cycle(x_names, "ring_actor", n);
    CAPTURE(text);
    CHECK(has(text, "request cycle across ranks: actor '" + std::string(x_names[r]) + "'"));
    for (int k = 0; k < n; ++k) {
        CHECK(has(text, "actor '" + std::string(x_names[k]) + "' (ring_actor) on rank " +
                            std::to_string(k)));
        CHECK(has(text, "actor '" + std::string(l_names[k]) + "' (local_hop) on rank " +
                            std::to_string(k)));
    }
    CHECK(has(text, "waits for the reply to its ask 'hop_q' to actor '" + std::string(l_names[r]) +
                        "' (local_hop) on rank " + std::to_string(r)));

    w.barrier();
    if (r == 0) CHECK(answer->get() == -1);
    hop_q after;
    (void)troupe::ask(x, after).get();
    w.barrier();
    x | troupe::finished_msg;
    l | troupe::finished_msg;
    w.stop(sys);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

namespace {

// Rank 1's end of the chain: holds the request until told to answer.
struct held_q : troupe::request<int> {};
struct release_msg : troupe::message {};
struct keeper : troupe::actor {
    held_q* held = nullptr;
    troupe::future<> holding;
    void receive(held_q& q) {
        q.defer();
        held = &q;
        holding.fulfil();
    }
    void receive(release_msg&) {
        held->reply(7);
        held = nullptr;
    }
};

// Rank 0's asks rank 1's; rank 1's asks its keeper (which holds the
// request: a wait that is no cycle, and ends).
struct chain_actor : troupe::actor {
    remote::remote_ref<chain_actor> next;
    keeper* k = nullptr;
    hop_q inner;
    held_q kept;
    void receive(hop_q& q) {
        if (k) q.reply(troupe::ask(*k, kept).get());
        else q.reply(next.ask(inner).get() + 1);
    }
};

std::uint64_t probes(const std::string& text, bool received) {
    const std::string line = "request-cycle probes sent / received: ";
    const auto at = text.find(line);
    if (at == std::string::npos) return 0;
    std::istringstream in(text.substr(at + line.size()));
    std::uint64_t sent = 0, got = 0;
    char slash = 0;
    in >> sent >> slash >> got;
    return received ? got : sent;
}

}  // namespace

TEST_CASE("a chain of waits that ends in no cycle is never called one") {
    remote::world& w = remote_test::world();
    if (w.size() != 2) return;
    troupe::actor_system sys{2};
    const int r = w.rank();
    chain_actor c;
    keeper k;
    c.set_name(r == 0 ? "asker" : "middle");
    k.set_name("keeper");
    if (r == 1) c.k = &k;
    w.publish("cycle.chain." + std::to_string(r), c);
    w.barrier();
    c.next = w.lookup<chain_actor>(1 - r, "cycle.chain." + std::to_string(1 - r));
    w.barrier();
    hop_q start;
    troupe::future<int>* answer = nullptr;
    if (r == 0) answer = &troupe::ask(c, start);
    // Probes go from rank 0's blocked asker to rank 1 (sent there,
    // received here), and none finds a cycle.
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    for (;;) {
        const std::string text = dump_now();
        CAPTURE(text);
        REQUIRE_FALSE(has(text, "request cycle"));
        if (probes(text, r == 1) >= 3) break;
        REQUIRE(std::chrono::steady_clock::now() < give_up);
        troupe::this_thread::sleep_for(2ms);  // polls a condition; the assertions are above
    }
    w.barrier();
    release_msg release;
    if (r == 1) {
        k.holding.get();
        k | release;
    }
    if (r == 0) CHECK(answer->get() == 8);
    CHECK_FALSE(has(dump_now(), "request cycle"));
    w.barrier();
    c | troupe::finished_msg;
    k | troupe::finished_msg;
    w.stop(sys);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
