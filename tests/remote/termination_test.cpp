// Collective termination: stop() called while messages are still in flight
// between ranks waits for all of them (and the actors they create work for),
// and a forgotten poison pill is reported per rank by stop_for.
#include <utility>

#include "remote_fixture.hpp"

namespace remote = troupe::remote;

// A hop-counted message bounced between random ranks until its hops run out.
struct hop : troupe::message {
    int left = 0;
    unsigned seed = 0;
};
TROUPE_REMOTE_MESSAGE(hop, "test.term.hop", &hop::left, &hop::seed);
struct last_call : troupe::message {};
TROUPE_REMOTE_MESSAGE(last_call, "test.term.last_call");

struct bouncer : troupe::actor {
    std::vector<remote::remote_ref<bouncer>> all;
    long handled = 0, ended = 0, expected_ends = 0;
    troupe::allocation receive(hop& h) {
        ++handled;
        if (h.left == 0) {  // this chain is over: tell everyone
            for (auto& b : all) b | last_call{};
            return troupe::Nodelete;
        }
        hop next;
        next.left = h.left - 1;
        next.seed = h.seed * 1103515245u + 12345u;
        all[(next.seed >> 16) % all.size()] | next;
        return troupe::Nodelete;
    }
    // Every chain ends with one last_call to every bouncer: the actor knows
    // when the last one is in and finishes.
    troupe::allocation receive(last_call&) {
        return ++ended == expected_ends ? troupe::Finished : troupe::Nodelete;
    }
};

TEST_CASE("stop waits for messages in flight anywhere") {
    auto& w = remote_test::world();
    constexpr int chains_per_rank = 8, hops = 300;
    troupe::actor_system sys{2};
    bouncer b;
    b.expected_ends = long{chains_per_rank} * w.size();
    w.publish("term.bouncer", b);
    w.barrier();
    for (int r = 0; r < w.size(); ++r) b.all.push_back(w.lookup<bouncer>(r, "term.bouncer"));
    w.barrier();  // every rank has its references before any message flies
    for (int c = 0; c < chains_per_rank; ++c) {
        hop h;
        h.left = hops;
        h.seed = unsigned(w.rank() * 1000 + c);
        b.all[std::size_t(w.rank())] | h;
    }
    w.stop(sys);  // returns only when every chain has ended everywhere
    CHECK(b.finished());
    CHECK(b.ended == b.expected_ends);
    CHECK(remote_test::sum_over_ranks(b.handled) == long{w.size()} * chains_per_rank * (hops + 1));
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

struct forgotten : troupe::actor {
    explicit forgotten(troupe::actor_system& s) : troupe::actor(s) {}
    troupe::allocation receive(hop&) { return troupe::Nodelete; }
};

TEST_CASE("a forgotten poison pill is reported per rank") {
    auto& w = remote_test::world();
    troupe::actor_system sys{1};
    // Only the last rank forgets its pill.
    const bool forget = w.rank() == w.size() - 1;
    auto f = std::make_unique<forgotten>(sys);
    hop h;
    *f | h;
    if (!forget) *f.release() | troupe::delete_msg;
    auto rep = w.stop_for(sys, std::chrono::milliseconds(50));
    CHECK_FALSE(rep.finished);  // collective: every rank gives up together
    if (forget) {
        CHECK_FALSE(rep.local.finished);
        CHECK(rep.local.live_actors == 1);
        CHECK(rep.to_string().find("1 x forgotten") != std::string::npos);
    } else {
        CHECK(rep.local.finished);
    }
}

TEST_CASE("a waiting stop reports periodically (the hook may send the pill)") {
    auto& w = remote_test::world();
    int reports = 0;
    std::size_t live_seen = 0;
    forgotten* f = nullptr;
    troupe::actor_system_config cfg;
    cfg.workers = 1;
    cfg.stop_report_period = std::chrono::milliseconds(20);
    // Called by world.stop between its rounds, on this thread: the report
    // names the survivor, and sending its pill lets the stop finish.
    cfg.on_stop_report = [&](const troupe::stop_report& r) {
        ++reports;
        live_seen = r.live_actors;
        if (f) *std::exchange(f, nullptr) | troupe::delete_msg;
    };
    troupe::actor_system sys{cfg};
    f = new forgotten(sys);
    hop h;
    *f | h;
    auto rep = w.stop_for(sys, std::chrono::seconds(30));
    CHECK(rep.finished);
    CHECK(reports >= 1);
    CHECK(live_seen == 1);
}
