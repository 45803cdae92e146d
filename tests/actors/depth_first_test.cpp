// The depth-first order for actors created in a batch (docs/actors.md,
// "Depth-first order"): a tree of actors built by behaviours holds one path
// of itself at 1 worker, not a level; the answer is right at any worker
// count; FIFO per sender holds when a later send finds an earlier one still
// waiting on the stack; a behaviour that blocks on an actor it has just
// created is answered by another worker.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actor_fixture.hpp"
#include "leak_check.hpp"

using troupe_test::scaled;

namespace {

// Live tree nodes, counted by the test itself (constructor / destructor),
// and the most seen at once.
std::atomic<long> live{0};
std::atomic<long> max_live{0};

struct grow : troupe::message {
    int depth;
    explicit grow(int d) : depth(d) {}
};
struct leaves : troupe::message {
    long n;
    explicit leaves(long v) : n(v) {}
};

// A node of depth d > 0 creates two children of depth d - 1 and sends each
// a grow; a leaf answers its parent at once; a node answers when both
// children have, and ends (the root, on the test's stack, finishes).
struct node : troupe::actor {
    node* parent;
    long* out;  // the root's answer
    long sum = 0;
    int replies = 0;
    node(node* p, long* o) : parent(p), out(o) {
        const long now = live.fetch_add(1, std::memory_order_relaxed) + 1;
        long seen = max_live.load(std::memory_order_relaxed);
        while (now > seen && !max_live.compare_exchange_weak(seen, now)) {}
    }
    ~node() override { live.fetch_sub(1, std::memory_order_relaxed); }

    troupe::allocation answer(long v) {
        if (parent == nullptr) {
            *out = v;
            return troupe::Finished;
        }
        troupe::send<leaves>(*parent, v);
        return troupe::Delete;
    }
    troupe::allocation receive(grow& g) {
        if (g.depth == 0) return answer(1);
        troupe::send<grow>(*new node{this, nullptr}, g.depth - 1);
        troupe::send<grow>(*new node{this, nullptr}, g.depth - 1);
        return troupe::Nodelete;
    }
    troupe::allocation receive(leaves& l) {
        sum += l.n;
        if (++replies < 2) return troupe::Nodelete;
        return answer(sum);
    }
};

// Builds a tree of the given depth from main; returns its leaf count and
// the most nodes alive at once.
std::pair<long, long> build_tree(std::size_t workers, int depth) {
    live = 0;
    max_live = 0;
    troupe::actor_system sys{troupe_test::workers(workers)};
    long result = 0;
    {
        node root{nullptr, &result};
        troupe::send<grow>(root, depth);
        sys.stop();
    }
    CHECK(live.load() == 0);
    return {result, max_live.load()};
}

}  // namespace

TEST_CASE("a tree of actors created by behaviours unfolds depth first at 1 worker") {
    troupe_test::watchdog w{troupe_test::current_test()};
    troupe_test::leak_check no_leaks;
    // 4,095 nodes: the whole tree fits one batch's depth-first budget.
    constexpr int depth = 11;
    const auto [result, most] = build_tree(1, depth);
    CHECK(result == 1L << depth);
    // Depth first, a node's children are alive with it until both have
    // answered: the path from the root and one waiting sibling per level
    // (2 * depth + 1). Breadth first, a whole level is alive (2,048 leaves).
    CAPTURE(most);
    CHECK(most <= 2 * depth + 2);
}

TEST_CASE("a tree larger than the depth-first budget gives the right answer and stays small") {
    troupe_test::on_workers([](std::size_t n) {
        troupe_test::leak_check no_leaks;
        const int depth = troupe_test::sanitized ? 13 : 16;
        const auto [result, most] = build_tree(n, depth);
        CHECK(result == 1L << depth);
        CAPTURE(most);
        // At 1 worker: each batch spends its budget depth first, then hands
        // the (at most depth) waiting subtrees to the mailboxes; far below a
        // level of the tree (32,768 leaves at depth 16).
        if (n == 1) CHECK(most <= 1L << (depth - 4));
    });
}

namespace {

struct numbered : troupe::message {
    int from, seq;
    numbered(int f, int s) : from(f), seq(s) {}
};
struct go : troupe::message {};
struct ping : troupe::message {};
struct start : troupe::message {};

// Records what it receives, in order; ends after `expect` messages.
struct recorder : troupe::actor {
    std::vector<std::pair<int, int>>* log;
    int expect;
    recorder(std::vector<std::pair<int, int>>* l, int e) : log(l), expect(e) {}
    troupe::allocation receive(numbered& m) {
        log->emplace_back(m.from, m.seq);
        return static_cast<int>(log->size()) == expect ? troupe::Delete : troupe::Nodelete;
    }
};

struct parent;
// Answers its creator's go with a ping, then ends.
struct pinger : troupe::actor {
    parent* to;
    explicit pinger(parent* p) : to(p) {}
    troupe::allocation receive(go&);
};

// Created by a behaviour: creates a recorder and a pinger, sends the pinger
// go and the recorder 1 and 2 (one delivery: their order is kept); the
// pinger's ping runs before 1 and 2 have (it was sent first), and the
// parent's 3 then must not overtake them.
struct parent : troupe::actor {
    std::vector<std::pair<int, int>>* log;
    recorder* r = nullptr;
    explicit parent(std::vector<std::pair<int, int>>* l) : log(l) {}
    troupe::allocation receive(start&) {
        r = new recorder{log, 4};
        auto* p = new pinger{this};
        troupe::send<go>(*p);
        troupe::send<numbered>(*r, 0, 1);
        troupe::send<numbered>(*r, 0, 2);
        return troupe::Nodelete;
    }
    troupe::allocation receive(ping&) {
        troupe::send<numbered>(*r, 0, 3);
        troupe::send<numbered>(*r, 0, 4);
        return troupe::Delete;
    }
};

troupe::allocation pinger::receive(go&) {
    troupe::send<ping>(*to);
    return troupe::Delete;
}

// Created by main: creates the parent and starts it.
struct origin : troupe::actor {
    std::vector<std::pair<int, int>>* log;
    explicit origin(std::vector<std::pair<int, int>>* l) : log(l) {}
    troupe::allocation receive(start&) {
        troupe::send<start>(*new parent{log});
        return troupe::Finished;
    }
};

}  // namespace

TEST_CASE("FIFO per sender holds when a send finds an earlier one still on the stack") {
    troupe_test::on_workers([](std::size_t n) {
        troupe_test::leak_check no_leaks;
        for (int round = 0; round < scaled(200, 20); ++round) {
            std::vector<std::pair<int, int>> log;
            {
                troupe::actor_system sys{troupe_test::workers(n)};
                origin o{&log};
                troupe::send<start>(o);
                sys.stop();
            }
            REQUIRE(log.size() == 4);
            std::string seen;
            for (const auto& [from, seq] : log) seen += std::to_string(seq);
            CHECK(seen == "1234");
        }
    });
}

namespace {

struct question : troupe::request<long> {};

struct answerer : troupe::actor {
    troupe::allocation receive(question& q) {
        q.reply(42);
        return troupe::Delete;
    }
};

// Creates an actor and asks it from its behaviour, waiting for the answer:
// the question must not wait on this worker's depth-first stack while the
// behaviour blocks (another worker answers it).
struct asker : troupe::actor {
    troupe::allocation receive(question& q) {
        auto* a = new answerer;
        question inner;
        const long v = troupe::ask(*a, inner).get();
        q.reply(v + 1);
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("a behaviour that blocks on an actor it created is answered by another worker") {
    troupe_test::on_workers(
        [](std::size_t n) {
            troupe_test::leak_check no_leaks;
            troupe::actor_system sys{troupe_test::workers(n)};
            asker a;
            for (int i = 0; i < scaled(100, 10); ++i) {
                question q;
                CHECK(troupe::ask(a, q).get() == 43);
            }
            a | troupe::finished_msg;
            sys.stop();
        },
        {2, 4});
}

namespace {

struct service : troupe::actor {
    troupe::allocation receive(question& q) {
        q.reply(42);
        return troupe::Nodelete;
    }
};
struct job : troupe::message {};
// Asks the service, which lives in its creator's mailbox, and waits.
struct client : troupe::actor {
    service* s;
    troupe::future<long>* out;
    client(service* sv, troupe::future<long>* o) : s(sv), out(o) {}
    troupe::allocation receive(job&) {
        question q;
        out->fulfil(troupe::ask(*s, q).get() + 1);
        return troupe::Delete;
    }
};
struct kickoff : troupe::message {
    troupe::future<long>* out;
    explicit kickoff(troupe::future<long>* o) : out(o) {}
};
struct creator : troupe::actor {
    service* s = nullptr;
    troupe::allocation receive(kickoff& k) {
        troupe::send<job>(*new client{s, k.out});
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("a new actor blocking on an actor of its creator's mailbox is answered") {
    troupe_test::on_workers(
        [](std::size_t n) {
            troupe_test::leak_check no_leaks;
            troupe::actor_system_config cfg = troupe_test::workers(n);
            cfg.queues_per_worker = 2;
            cfg.placement = troupe::external_placement::spread;
            troupe::actor_system sys{cfg};
            // Spread placement: creation t takes mailbox t mod (2 n), so
            // the creator (creation 0) and the last service (creation 2 n)
            // share mailbox 0.
            creator c;
            std::vector<std::unique_ptr<service>> services;
            for (std::size_t i = 0; i < 2 * n; ++i) services.push_back(std::make_unique<service>());
            c.s = services.back().get();
            for (int i = 0; i < scaled(50, 10); ++i) {
                troupe::future<long> answer;
                troupe::send<kickoff>(c, &answer);
                CHECK(answer.get() == 43);
            }
            c | troupe::finished_msg;
            for (auto& s : services) *s | troupe::finished_msg;
            sys.stop();
        },
        {2, 4});
}
