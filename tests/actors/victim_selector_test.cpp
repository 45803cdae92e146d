// Victim selection: random, longest-victim, and locality groups on hwloc
// synthetic topologies (Wölke's weighted stealing).
#include <algorithm>
#include <atomic>
#include <set>
#include <vector>

#include "actor_fixture.hpp"
#include "troupe/topology.hpp"

namespace {

troupe::victim_context context(std::size_t self, std::size_t workers,
                               const std::vector<std::size_t>& pus, const troupe::topology* t,
                               const std::atomic<std::uint64_t>* stamps = nullptr) {
    troupe::victim_context c;
    c.self = self;
    c.workers = workers;
    c.worker_pu = pus;
    c.machine = t;
    c.stamps = stamps;
    return c;
}

struct always_next final : troupe::victim_selector {
    explicit always_next(const troupe::victim_context& c) : self(c.self), n(c.workers) {}
    std::size_t choose() override {
        calls.fetch_add(1, std::memory_order_relaxed);
        return (self + 1) % n;
    }
    std::size_t self, n;
    static inline std::atomic<long> calls{0};
};

}  // namespace

TEST_CASE("locality groups on 'pack:2 numa:2 core:4 pu:2' are cumulative, nearest first" *
          doctest::skip(!troupe::topology_has_hwloc)) {  // synthetic: hwloc builds
    troupe::topology t{"pack:2 numa:2 core:4 pu:2"};
    // Eight workers: PU 0 and its SMT sibling, two more on the NUMA node,
    // two on the other node of the package, two on the other package.
    const std::vector<std::size_t> pus{0, 1, 2, 3, 8, 9, 16, 24};
    troupe::locality_victims v{context(0, 8, pus, &t)};
    using G = std::vector<std::size_t>;
    REQUIRE(v.groups().size() == 4);
    CHECK(v.groups()[0] == G{1});
    CHECK(v.groups()[1] == G{1, 2, 3});
    CHECK(v.groups()[2] == G{1, 2, 3, 4, 5});
    CHECK(v.groups()[3] == G{1, 2, 3, 4, 5, 6, 7});

    // |g0| = 1 attempt in g0, then 3 in g1, 5 in g2, then g3 indefinitely.
    auto in = [](const G& g, std::size_t x) { return std::find(g.begin(), g.end(), x) != g.end(); };
    CHECK(v.choose() == 1);
    for (int i = 0; i < 3; ++i) CHECK(in(v.groups()[1], v.choose()));
    for (int i = 0; i < 5; ++i) CHECK(in(v.groups()[2], v.choose()));
    CHECK(v.level() == 3);
    std::set<std::size_t> far;
    for (int i = 0; i < 400; ++i) {
        std::size_t x = v.choose();
        CHECK(x != 0);
        far.insert(x);
    }
    CHECK(far.size() == 7);  // eventually every other worker
    // A successful steal restarts at the nearest group.
    v.feedback(true);
    CHECK(v.level() == 0);
    CHECK(v.choose() == 1);
    // Failures do not reset.
    v.feedback(false);
    CHECK(v.level() == 1);
}

TEST_CASE("locality groups from another worker's point of view, and on a cache-only machine" *
          doctest::skip(!troupe::topology_has_hwloc)) {
    troupe::topology t{"pack:2 numa:2 core:4 pu:2"};
    const std::vector<std::size_t> pus{0, 1, 2, 3, 8, 9, 16, 24};
    troupe::locality_victims v6{context(6, 8, pus, &t)};  // PU 16: PU 24 shares its package only
    REQUIRE(v6.groups().size() == 2);
    CHECK(v6.groups()[0] == std::vector<std::size_t>{7});
    CHECK(v6.groups()[1] == std::vector<std::size_t>{7, 0, 1, 2, 3, 4, 5});

    troupe::topology c{"pack:1 l3:2 l2:2 core:2 pu:1"};  // 8 PUs, two L3 domains
    const std::vector<std::size_t> cpus{0, 1, 2, 3, 4, 5, 6, 7};
    troupe::locality_victims v{context(0, 8, cpus, &c)};
    REQUIRE(v.groups().size() == 3);
    CHECK(v.groups()[0] == std::vector<std::size_t>{1});        // shared L2
    CHECK(v.groups()[1] == std::vector<std::size_t>{1, 2, 3});  // shared L3
    CHECK(v.groups()[2].size() == 7);                           // everybody
}

TEST_CASE("without a topology, locality is one group (random stealing)") {
    const std::vector<std::size_t> pus;
    troupe::locality_victims v{context(2, 5, pus, nullptr)};
    REQUIRE(v.groups().size() == 1);
    CHECK(v.groups()[0] == std::vector<std::size_t>{0, 1, 3, 4});
}

TEST_CASE("random victims: never self, every other worker eventually") {
    troupe::random_victims v{context(3, 6, {}, nullptr)};
    std::set<std::size_t> seen;
    for (int i = 0; i < 1000; ++i) {
        std::size_t x = v.choose();
        CHECK(x != 3);
        CHECK(x < 6);
        seen.insert(x);
    }
    CHECK(seen.size() == 5);
    troupe::random_victims one{context(0, 1, {}, nullptr)};
    CHECK(one.choose() == troupe::victim_selector::none);
}

TEST_CASE("longest victim: the worker with the oldest steal timestamp") {
    std::atomic<std::uint64_t> stamps[4];
    stamps[0] = 50;
    stamps[1] = 10;
    stamps[2] = 30;
    stamps[3] = 5;
    troupe::longest_victims v{context(3, 4, {}, nullptr, stamps)};
    CHECK(v.choose() == 1);  // 3 (itself) is older but excluded
    stamps[1] = 100;
    CHECK(v.choose() == 2);
}

TEST_CASE("longest victim: a worker whose stamp stays oldest does not hide the others") {
    // A worker blocked inside a behaviour never refreshes its stamp. Before
    // the fix every choice named it; now each sweep tries every other worker.
    std::atomic<std::uint64_t> stamps[4];
    stamps[0] = 50;
    stamps[1] = 1;  // blocked: oldest forever
    stamps[2] = 30;
    stamps[3] = 40;
    troupe::longest_victims v{context(0, 4, {}, nullptr, stamps)};
    for (int sweep = 0; sweep < 3; ++sweep) {
        std::set<std::size_t> seen;
        for (int i = 0; i < 3; ++i) {
            v.feedback(false);
            seen.insert(v.choose());
        }
        CHECK(seen == std::set<std::size_t>{1, 2, 3});
    }
    // Oldest first within a sweep; a successful steal restarts the sweep.
    CHECK(v.choose() == 1);
    v.feedback(true);
    CHECK(v.choose() == 1);
}

TEST_CASE("a custom victim selector is used by the executor") {
    troupe_test::watchdog wd{"custom victims"};
    troupe::actor_system_config cfg = troupe_test::workers(2);
    cfg.custom_victims = [](const troupe::victim_context& c) {
        return std::make_unique<always_next>(c);
    };
    {
        troupe::actor_system sys{cfg};
        struct quick : troupe::actor {};
        quick q;
        q | troupe::finished_msg;
        // An idle worker tries to steal within its first passes.
        for (int i = 0; i < 1000000 && always_next::calls.load() == 0; ++i)
            troupe::this_thread::yield();
        sys.stop();
    }
    CHECK(always_next::calls.load() > 0);
}
