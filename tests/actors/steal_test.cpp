// Work stealing under an unbalanced load: every loaded actor's mailbox
// belongs to worker 0, so the others must steal. Each actor's messages must
// still be processed one at a time (a per-actor in-flight flag) and in FIFO
// order per sender (sequence numbers), for every victim heuristic.
#include <atomic>
#include <memory>
#include <vector>

#include "actor_fixture.hpp"
#include "leak_check.hpp"
#include "troupe/topology.hpp"

using troupe_test::scaled;

namespace {

constexpr long Set = 8;
std::atomic<long> overlaps{0}, out_of_order{0};

struct seq_msg : troupe::message {
    long from, seq;
    seq_msg(long f, long s) : message(troupe::Delete), from(f), seq(s) {}
};
struct kick : troupe::message {};
kick kick_msg;

struct member : troupe::actor {
    member** group = nullptr;
    long id = 0, rounds = 0, recs = 0, sends = 0;
    long next_seq[Set] = {};
    long last_seq[Set];
    std::atomic<bool> in_flight{false};
    member() {
        for (auto& l : last_seq) l = -1;
    }

    troupe::allocation step() {
        if (recs == rounds * Set) return troupe::Finished;
        const long to = sends % Set;
        *group[to] | *new seq_msg{id, next_seq[to]++};
        ++sends;
        ++recs;
        return troupe::Nodelete;
    }
    troupe::allocation guarded(long from, long seq) {
        // relaxed suffices to detect overlap: two workers inside at once both
        // see the flag set by the other at some point.
        if (in_flight.exchange(true, std::memory_order_acq_rel)) overlaps.fetch_add(1);
        if (from >= 0) {
            if (seq != last_seq[from] + 1) out_of_order.fetch_add(1);
            last_seq[from] = seq;
        }
        // A little work, so batches take long enough to be stolen.
        volatile long spin = 0;
        for (int i = 0; i < 200; ++i) spin = spin + i;
        in_flight.store(false, std::memory_order_release);
        return step();
    }
    troupe::allocation receive(seq_msg& m) { return guarded(m.from, m.seq); }
    troupe::allocation receive(kick&) { return guarded(-1, 0); }
};
struct dummy : troupe::actor {};

void run_unbalanced(troupe::actor_system_config cfg) {
    overlaps = 0;
    out_of_order = 0;
    cfg.placement = troupe::external_placement::spread;  // the layout below relies on its order
    troupe::actor_system sys{cfg};
    const std::size_t m = sys.mailboxes(), per = m / sys.workers();
    const long groups = 16, rounds = scaled(200L);
    std::vector<std::unique_ptr<member>> members;
    std::vector<std::unique_ptr<dummy>> dummies;
    std::vector<member*> table;
    // Spread placement hands out tickets round-robin: keep only those landing
    // in worker 0's range (mailboxes [0, per)) for loaded actors.
    for (std::size_t ticket = 0; members.size() < static_cast<std::size_t>(groups * Set);
         ticket = (ticket + 1) % m) {
        if (ticket < per) {
            members.push_back(std::make_unique<member>());
            table.push_back(members.back().get());
        } else {
            dummies.push_back(std::make_unique<dummy>());
        }
    }
    for (std::size_t i = 0; i < members.size(); ++i) {
        members[i]->group = &table[i - i % Set];
        members[i]->id = static_cast<long>(i % Set);
        members[i]->rounds = rounds;
    }
    for (auto& a : members) *a | kick_msg;
    for (auto& d : dummies) *d | troupe::finished_msg;
    sys.stop();
    for (auto& a : members) {
        CHECK(a->recs == rounds * Set);
        CHECK(a->finished());
        for (long s = 0; s < Set; ++s) CHECK(a->last_seq[s] == rounds - 1);
    }
    CHECK(overlaps.load() == 0);
    CHECK(out_of_order.load() == 0);
    if (sys.statistics().steal_attempts) MESSAGE("steals: " << sys.statistics().steals);
}

// A pipeline that grows itself (Savina's sieve): the first stage gets all
// its input in one batch and creates the next stage from a behaviour, so
// that stage's mailbox is in the first stage's own worker's range. Both
// rules are needed (each alone fails this test): before long batches
// flushed their sends early, stage 2 received nothing until stage 1's batch
// had ended; before creations skipped the creator's own mailbox, stage 2
// could share stage 1's mailbox, which nobody may gulp during stage 1's
// batch. Either way the pipeline ran one stage at a time on one worker.
// Observed without time: stage 1's last item waits for stage 2 to
// have run elsewhere (watchdog-bounded).
namespace pipeline {

struct item : troupe::message {
    long value;
    explicit item(long v) : message(troupe::Delete), value(v) {}
};

struct stage2 : troupe::actor {
    std::atomic<long> received{0};
    long sum = 0;
    troupe::allocation receive(item& m) {
        sum += m.value;
        received.fetch_add(1, std::memory_order_release);
        return troupe::Nodelete;
    }
};

struct stage1 : troupe::actor {
    long items = 0, seen = 0;
    stage2* next = nullptr;
    bool next_ran_during_batch = false;
    std::atomic<bool> done{false};
    troupe::allocation receive(item& m) {
        if (next == nullptr) next = new stage2;  // in this worker's range
        volatile long work = 0;                  // some work per item, so the batch runs long
        for (int i = 0; i < 2000; ++i) work = work + i;
        *next | *new item{m.value};
        if (++seen < items) return troupe::Nodelete;
        // The last item of the one batch holding them all: stage 2 can run
        // while we wait here only if our earlier sends reached its mailbox
        // before this batch's end and another worker took it. State-based,
        // no clock: without either rule stage 2 never runs during this
        // batch and the wait ends only at the test's watchdog (a failure).
        while (next->received.load(std::memory_order_acquire) == 0) troupe::this_thread::yield();
        next_ran_during_batch = next->received.load(std::memory_order_acquire) > 0;
        done.store(true, std::memory_order_release);  // main reads the fields above after it
        return troupe::Nodelete;
    }
};

struct feed : troupe::message {};
// Sends all items to stage 1 from one behaviour: they reach its mailbox in
// one flush, so stage 1 takes them in one gulp (one batch).
struct producer : troupe::actor {
    stage1* first = nullptr;
    troupe::allocation receive(feed&) {
        for (long v = 0; v < first->items; ++v) *first | *new item{v};
        return troupe::Nodelete;
    }
};

}  // namespace pipeline

}  // namespace

TEST_CASE(
    "a long batch hands its sends out early: a pipeline's next stage runs elsewhere meanwhile") {
    troupe_test::watchdog wd{"long batch pipeline"};
    for (int round = 0; round < 3; ++round) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{troupe_test::workers(2)};
        pipeline::stage1 s1;
        s1.items = scaled(2000L);
        pipeline::producer p;
        p.first = &s1;
        pipeline::feed go;
        p | go;
        troupe_test::wait_until([&] { return s1.done.load(std::memory_order_acquire); });
        pipeline::stage2* s2 = s1.next;
        REQUIRE(s2 != nullptr);
        troupe_test::wait_until(
            [&] { return s2->received.load(std::memory_order_acquire) == s1.items; });
        *s2 | troupe::finished_msg;
        s1 | troupe::finished_msg;
        p | troupe::finished_msg;
        sys.stop();
        CHECK(s1.next_ran_during_batch);
        CHECK(s2->sum == s1.items * (s1.items - 1) / 2);
        delete s2;
        if constexpr (troupe::actor_statistics::built_in) {
            CHECK(sys.statistics().long_batch_flushes > 0);
        }
    }
}

// A behaviour that yields until another actor has run what it sent (CAF
// and Akka deliver at once, so such a loop works there with two workers).
// troupe stages a batch's sends until the batch ends; a yield inside a
// behaviour must hand them out and get a parked worker looking, or the
// loop waits forever for a message still in its own worker's stage. Here
// the one message of the batch is short (no early flush) and the other
// worker is parked before the batch begins (an untimed sleep).
namespace yield_wait {

struct ping : troupe::message {
    ping() : message(troupe::Delete) {}
};

struct target : troupe::actor {
    std::atomic<long> received{0};
    troupe::allocation receive(ping&) {
        received.fetch_add(1, std::memory_order_release);
        return troupe::Nodelete;
    }
};

struct waiter : troupe::actor {
    target* next = nullptr;
    std::atomic<bool> done{false};
    troupe::allocation receive(ping&) {
        next = new target;  // created in this worker's range
        *next | *new ping;
        while (next->received.load(std::memory_order_acquire) == 0) troupe::this_thread::yield();
        done.store(true, std::memory_order_release);
        return troupe::Nodelete;
    }
};

}  // namespace yield_wait

TEST_CASE("a behaviour yielding until another actor ran its send does not wait forever") {
    troupe_test::watchdog wd{"yield wait"};
    for (int round = 0; round < 20; ++round) {
        troupe::actor_system sys{troupe_test::workers(2)};
        yield_wait::waiter w;
        // Both workers parked (nothing to do) before the message arrives,
        // so no batch is running when they park: they sleep without timeout.
        troupe_test::wait_until([&] { return sys.parked_workers() == 2; });
        w | *new yield_wait::ping;
        troupe_test::wait_until([&] { return w.done.load(std::memory_order_acquire); });
        CHECK(w.next->received.load() == 1);
        *w.next | troupe::finished_msg;
        w | troupe::finished_msg;
        sys.stop();
        delete w.next;
    }
}

TEST_CASE("unbalanced load: FIFO per sender and one worker per actor, every heuristic") {
    for (auto policy : {troupe::victim_policy::random, troupe::victim_policy::longest,
                        troupe::victim_policy::locality}) {
        for (std::size_t w : {2u, 4u}) {
            CAPTURE(troupe::to_string(policy));
            CAPTURE(w);
            troupe_test::watchdog wd{"unbalanced " + std::string{troupe::to_string(policy)}};
            troupe::actor_system_config cfg = troupe_test::workers(w);
            cfg.victims = policy;
            cfg.queues_per_worker = 4;  // fewer, busier mailboxes: more steals
            run_unbalanced(cfg);
        }
    }
}

TEST_CASE("the same load with stealing off still completes (worker 0 does it all)") {
    troupe_test::watchdog wd{"no stealing"};
    troupe::actor_system_config cfg = troupe_test::workers(2);
    cfg.stealing = false;
    run_unbalanced(cfg);
}

TEST_CASE("locality stealing on a synthetic topology runs the load correctly" *
          doctest::skip(!troupe::topology_has_hwloc)) {  // synthetic: hwloc builds
    troupe_test::watchdog wd{"synthetic locality"};
    troupe::actor_system_config cfg = troupe_test::workers(4);
    cfg.victims = troupe::victim_policy::locality;
    cfg.synthetic_topology = "pack:2 numa:2 core:4 pu:2";
    cfg.worker_pu = {0, 1, 8, 16};
    cfg.queues_per_worker = 4;
    run_unbalanced(cfg);
}

namespace {

// W workers; W - 1 behaviours, one on each worker but 0, block waiting for
// a helper actor's reply; the helper answers only once all of them asked,
// and its mailbox sits in the last worker's range. Only worker 0 is free:
// whatever its victim policy, it must eventually try the worker holding the
// helper's mailbox and steal it.
struct question : troupe::request<long> {};
struct start : troupe::request<long> {};

struct helper_actor : troupe::actor {
    std::vector<question*> asked;
    std::size_t expected = 0;
    troupe::allocation receive(question& q) {
        q.defer();  // answered by a later receive (else the ask would fail)
        asked.push_back(&q);
        if (asked.size() == expected) {
            for (question* a : asked) a->reply(42);
            asked.clear();
        }
        return troupe::Nodelete;
    }
};

struct waiter_actor : troupe::actor {
    helper_actor* helper = nullptr;
    troupe::allocation receive(start& s) {
        question q;
        s.reply(troupe::ask(*helper, q).get());  // blocks this worker
        return troupe::Nodelete;
    }
};

struct filler : troupe::actor {};

void blocked_behaviours(std::size_t w, troupe::victim_policy policy) {
    troupe::actor_system_config cfg = troupe_test::workers(w);
    cfg.victims = policy;
    cfg.placement = troupe::external_placement::spread;
    troupe::actor_system sys{cfg};
    const std::size_t m = sys.mailboxes(), per = m / w;
    // Spread placement hands out mailbox tickets 0, 1, 2, ... in order.
    std::vector<std::unique_ptr<troupe::actor>> all;
    std::vector<waiter_actor*> waiters;
    helper_actor* helper = nullptr;
    const std::size_t helper_ticket = (w - 1) * per + 1;
    for (std::size_t t = 0; t <= helper_ticket; ++t) {
        if (t == helper_ticket) {
            auto h = std::make_unique<helper_actor>();
            helper = h.get();
            all.push_back(std::move(h));
        } else if (t % per == 0 && t / per >= 1) {
            auto a = std::make_unique<waiter_actor>();
            waiters.push_back(a.get());
            all.push_back(std::move(a));
        } else {
            all.push_back(std::make_unique<filler>());
        }
    }
    REQUIRE(waiters.size() == w - 1);
    helper->expected = waiters.size();
    std::vector<std::unique_ptr<start>> starts;
    std::vector<troupe::future<long>*> answers;
    for (waiter_actor* a : waiters) {
        a->helper = helper;
        starts.push_back(std::make_unique<start>());
        answers.push_back(&troupe::ask(*a, *starts.back()));
    }
    for (auto* f : answers) CHECK(f->get() == 42);
    for (auto& a : all) *a | troupe::finished_msg;
    sys.stop();
}

}  // namespace

TEST_CASE(
    "behaviours blocked on a helper's reply: every victim policy finds the helper's mailbox") {
    for (auto policy : {troupe::victim_policy::random, troupe::victim_policy::longest,
                        troupe::victim_policy::locality}) {
        for (std::size_t w : {2u, 3u, 4u}) {
            CAPTURE(troupe::to_string(policy));
            CAPTURE(w);
            troupe_test::watchdog wd{"blocked behaviours, " +
                                     std::string{troupe::to_string(policy)} + ", " +
                                     std::to_string(w) + " workers"};
            for (int round = 0; round < 5; ++round) blocked_behaviours(w, policy);
        }
    }
}
