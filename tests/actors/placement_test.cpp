// Placement of actors created outside the executor
// (actor_system_config::placement): which worker runs them under each policy,
// FIFO per sender whatever the layout, and every worker getting work when
// there is enough of it.
#include <algorithm>
#include <atomic>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "actor_fixture.hpp"

using troupe_test::scaled;

namespace {

constexpr long Set = 8;
constexpr long From_main = Set;  // sender index of messages sent by main

struct seq_msg : troupe::message {
    long from, seq;
    seq_msg(long f, long s) : message(troupe::Delete), from(f), seq(s) {}
};

// The executor workload with numbered messages: Set adjacent members form a
// group; each receive checks the sender's sequence number, notes the worker
// thread it runs on, and sends the next numbered message to the next member
// round-robin. Each member receives rounds * Set messages from its group
// plus one from main, then finishes.
struct member : troupe::actor {
    member* group = nullptr;  // the group's first member
    long id = 0, rounds = 0, recs = 0, sends = 0, out_of_order = 0;
    long next_seq[Set] = {};
    long last_seq[Set + 1];
    // Distinct workers, in order of first use: the running context is the
    // worker's kernel thread, or its user thread with user-thread workers
    // (which may migrate between kernel threads).
    std::vector<const troupe::context*> ran_on;
    long work = 0;  // busy-loop iterations per receive

    member() { std::fill(std::begin(last_seq), std::end(last_seq), -1); }

    troupe::allocation receive(seq_msg& m) {
        if (m.seq != last_seq[m.from] + 1) ++out_of_order;
        last_seq[m.from] = m.seq;
        const troupe::context* me = &troupe::this_context();
        if (std::find(ran_on.begin(), ran_on.end(), me) == ran_on.end()) ran_on.push_back(me);
        volatile long spin = 0;
        for (long i = 0; i < work; ++i) spin = spin + i;
        if (recs == rounds * Set) return troupe::Finished;
        const long to = sends % Set;
        group[to] | *new seq_msg{id, next_seq[to]++};
        ++sends;
        ++recs;
        return troupe::Nodelete;
    }
};

// Creates `count` members from this (non-worker) thread, in order, kicks
// each once, waits for the system to stop and checks every count and order.
std::unique_ptr<member[]> run_groups(const troupe::actor_system_config& cfg, long count,
                                     long rounds, long work = 0,
                                     troupe::actor_statistics* stats = nullptr) {
    troupe::actor_system sys{cfg};
    std::unique_ptr<member[]> a{new member[static_cast<std::size_t>(count)]};
    for (long i = 0; i < count; ++i) {
        a[i].group = &a[i - i % Set];
        a[i].id = i % Set;
        a[i].rounds = rounds;
        a[i].work = work;
    }
    for (long i = 0; i < count; ++i) a[i] | *new seq_msg{From_main, 0};
    sys.stop();
    if (stats) *stats = sys.statistics();
    for (long i = 0; i < count; ++i) {
        CAPTURE(i);
        CHECK(a[i].finished());
        CHECK(a[i].recs == rounds * Set);
        CHECK(a[i].out_of_order == 0);
        for (long s = 0; s < Set; ++s) CHECK(a[i].last_seq[s] == rounds - 1);
        CHECK(a[i].last_seq[From_main] == 0);
    }
    return a;
}

}  // namespace

TEST_CASE(
    "grouped placement: a run of consecutive creations shares a worker, the next run the next "
    "worker") {
    // Stealing off, so each actor runs only where placement put it. With the
    // spread placement (the only rule before grouped placement existed)
    // every group here straddles all workers and this test fails.
    for (std::size_t w : {2u, 3u}) {
        CAPTURE(w);
        troupe_test::watchdog wd{"grouped placement, " + std::to_string(w) + " workers"};
        troupe::actor_system_config cfg = troupe_test::workers(w);
        cfg.stealing = false;
        CHECK(cfg.placement == troupe::external_placement::spread);  // the default
        cfg.placement = troupe::external_placement::grouped;
        const long run = 4 * Set;  // groups never straddle two runs
        cfg.placement_run = static_cast<std::size_t>(run);
        const long count = 2 * static_cast<long>(w) * run;
        troupe::actor_statistics stats;
        auto a = run_groups(cfg, count, scaled(20L), 0, &stats);
        // No group straddles two workers: no behaviour's send crosses.
        if constexpr (troupe::actor_statistics::built_in) CHECK(stats.cross_worker_sends == 0);
        // Run r goes to worker r mod w: one thread per class, distinct classes
        // on distinct threads.
        std::vector<const troupe::context*> worker_of(w);
        for (long i = 0; i < count; ++i) {
            CAPTURE(i);
            REQUIRE(a[i].ran_on.size() == 1);
            const troupe::context*& expect =
                worker_of[static_cast<std::size_t>((i / run) % static_cast<long>(w))];
            if (expect == nullptr) expect = a[i].ran_on[0];
            CHECK(a[i].ran_on[0] == expect);
        }
        for (std::size_t x = 0; x < w; ++x)
            for (std::size_t y = x + 1; y < w; ++y) CHECK(worker_of[x] != worker_of[y]);
    }
}

TEST_CASE("spread placement: consecutive creations go to consecutive mailboxes over all workers") {
    troupe_test::watchdog wd{"spread placement"};
    CHECK(std::string{troupe::to_string(troupe::external_placement::spread)} == "spread");
    CHECK(std::string{troupe::to_string(troupe::external_placement::grouped)} == "grouped");
    troupe::actor_system_config cfg = troupe_test::workers(2);
    cfg.stealing = false;
    cfg.queues_per_worker = 1;  // mailbox i belongs to worker i
    cfg.placement = troupe::external_placement::spread;
    troupe::actor_statistics stats;
    auto a = run_groups(cfg, 4 * Set, scaled(20L), 0, &stats);
    // Every group straddles both workers: half of all member sends cross.
    if constexpr (troupe::actor_statistics::built_in) CHECK(stats.cross_worker_sends > 0);
    for (long i = 0; i < 4 * Set; ++i) {
        CAPTURE(i);
        REQUIRE(a[i].ran_on.size() == 1);
        CHECK(a[i].ran_on[0] == a[i % 2].ran_on[0]);
    }
    CHECK(a[0].ran_on[0] != a[1].ran_on[0]);
}

TEST_CASE("grouped placement with stealing: FIFO per sender, and both workers run behaviours") {
    // Default run length; two runs' worth of actors, so each worker starts
    // with its own share. Each actor's messages stay in order whatever the
    // steals do. Which workers run them is not fixed any more: while a
    // worker is parked (or woken and not yet running) the awake one scans
    // its mailboxes as its own (adoption, docs/actors.md "Stealing"), so a
    // slow-to-wake worker (seen with user-thread workers under ASan) may
    // find its share already done. At most the two workers run them.
    for (auto policy : {troupe::victim_policy::random, troupe::victim_policy::longest,
                        troupe::victim_policy::locality}) {
        CAPTURE(troupe::to_string(policy));
        troupe_test::watchdog wd{"grouped placement with stealing, " +
                                 std::string{troupe::to_string(policy)}};
        troupe::actor_system_config cfg = troupe_test::workers(2);
        cfg.victims = policy;
        cfg.placement = troupe::external_placement::grouped;
        const long count = 2 * static_cast<long>(cfg.placement_run);
        auto a = run_groups(cfg, count, scaled(10L), 200);
        std::vector<const troupe::context*> all;
        for (long i = 0; i < count; ++i)
            for (auto id : a[i].ran_on)
                if (std::find(all.begin(), all.end(), id) == all.end()) all.push_back(id);
        CHECK(all.size() >= 1);
        CHECK(all.size() <= 2);
    }
}

TEST_CASE("grouped placement, 4 workers with stealing (oversubscribed): every message in order") {
    troupe_test::watchdog wd{"grouped placement, 4 workers"};
    troupe::actor_system_config cfg = troupe_test::workers(4);
    cfg.placement = troupe::external_placement::grouped;
    cfg.placement_run = 3 * Set + 1;  // runs that groups straddle
    run_groups(cfg, 8 * static_cast<long>(cfg.placement_run), scaled(10L), 50);
}

namespace {

struct numbered : troupe::actor {
    long expect = 0, out_of_order = 0;
    troupe::allocation receive(seq_msg& m) {
        if (m.seq != expect) ++out_of_order;
        expect = m.seq + 1;
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("sends from threads that create actors concurrently stay FIFO under either placement") {
    for (auto placement :
         {troupe::external_placement::grouped, troupe::external_placement::spread}) {
        troupe_test::on_workers([placement](std::size_t w) {
            CAPTURE(troupe::to_string(placement));
            troupe::actor_system_config cfg = troupe_test::workers(w);
            cfg.placement = placement;
            cfg.placement_run = 16;
            troupe::actor_system sys{cfg};
            constexpr int threads = 3;
            const long actors = 40, messages = scaled(2000L);
            std::vector<std::unique_ptr<numbered[]>> made(threads);
            std::vector<std::thread> creators;
            for (int t = 0; t < threads; ++t)
                creators.emplace_back([&, t] {
                    made[t].reset(new numbered[static_cast<std::size_t>(actors)]);
                    for (long k = 0; k < messages; ++k)
                        for (long i = 0; i < actors; ++i) made[t][i] | *new seq_msg{0, k};
                    for (long i = 0; i < actors; ++i) made[t][i] | troupe::finished_msg;
                });
            for (auto& c : creators) c.join();
            sys.stop();
            for (auto& m : made)
                for (long i = 0; i < actors; ++i) {
                    CHECK(m[i].finished());
                    CHECK(m[i].expect == messages);
                    CHECK(m[i].out_of_order == 0);
                }
        });
    }
}

namespace {

struct go : troupe::message {};
std::atomic<bool> a_started{false}, b_ran{false};

// Holds its worker (a busy wait, no troupe primitive: no block hook) until
// the other actor has run.
struct waits_for_b : troupe::actor {
    troupe::allocation receive(go&) {
        a_started.store(true, std::memory_order_release);
        while (!b_ran.load(std::memory_order_acquire)) std::this_thread::yield();
        return troupe::Finished;
    }
};
struct sets_b : troupe::actor {
    troupe::allocation receive(go&) {
        b_ran.store(true, std::memory_order_release);
        return troupe::Finished;
    }
};

// Both actors are in worker 0's mailboxes (tickets 0 and 1 under either
// placement); worker 1 parked (without a timeout: no batch was running)
// before a's behaviour began. Before an external send woke a helper when
// the owner was inside a batch, b waited behind a forever (the watchdog
// fired).
void queued_behind_busy_worker(troupe::external_placement placement) {
    a_started = false;
    b_ran = false;
    troupe::actor_system_config cfg = troupe_test::workers(2);
    cfg.placement = placement;
    troupe::actor_system sys{cfg};
    waits_for_b a;
    sets_b b;
    go to_a, to_b;
    troupe_test::wait_until([&] { return sys.parked_workers() == 2; });
    a | to_a;
    troupe_test::wait_until([] { return a_started.load(std::memory_order_acquire); });
    b | to_b;
    sys.stop();
    CHECK(b_ran.load());
    CHECK(a.finished());
    CHECK(b.finished());
}

}  // namespace

TEST_CASE("a message from main queued behind a busy worker wakes a sleeping one to take it") {
    for (auto placement :
         {troupe::external_placement::spread, troupe::external_placement::grouped}) {
        CAPTURE(troupe::to_string(placement));
        troupe_test::watchdog wd{"message queued behind a busy worker"};
        queued_behind_busy_worker(placement);
    }
}
