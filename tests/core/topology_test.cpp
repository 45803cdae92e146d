// topology: distances and grouping on synthetic machines (hwloc builds),
// the flat topology (every build), binding.
#include <pthread.h>
#include <sched.h>

#include <vector>

#include "fixture.hpp"
#include "troupe/topology.hpp"

using troupe::distance;

// Synthetic descriptions need hwloc; a build without it rejects them (checked below).
static const auto needs_hwloc = doctest::skip(!troupe::topology_has_hwloc);

TEST_CASE("synthetic 'pack:2 numa:2 core:4 pu:2': SMT, NUMA, package, machine distances" *
          needs_hwloc) {
    troupe::topology t{"pack:2 numa:2 core:4 pu:2"};
    REQUIRE(t.pu_count() == 32);
    CHECK(t.core_count() == 16);
    CHECK(t.numa_count() == 4);
    CHECK(t.distance_between(0, 0) == distance::same_pu);
    CHECK(t.distance_between(0, 1) == distance::same_core);
    CHECK(t.distance_between(0, 2) == distance::shared_l3);     // same NUMA node
    CHECK(t.distance_between(0, 8) == distance::same_package);  // other node, same package
    CHECK(t.distance_between(0, 16) == distance::machine);
    CHECK(t.distance_between(17, 31) == distance::same_package);
    CHECK(t.distance_between(31, 30) == distance::same_core);
    CHECK_FALSE(t.is_this_system());
    CHECK_FALSE(t.bind_current_thread(0));  // cannot bind on an imaginary machine
    CHECK_THROWS_AS(t.distance_between(0, 32), std::out_of_range);
}

TEST_CASE("synthetic caches: 'pack:2 l3:2 l2:2 core:2 pu:2'" * needs_hwloc) {
    troupe::topology t{"pack:2 l3:2 l2:2 core:2 pu:2"};
    REQUIRE(t.pu_count() == 32);
    CHECK(t.distance_between(0, 1) == distance::same_core);
    CHECK(t.distance_between(0, 2) == distance::shared_l2);
    CHECK(t.distance_between(0, 4) == distance::shared_l3);
    CHECK(t.distance_between(0, 8) == distance::same_package);
    CHECK(t.distance_between(0, 16) == distance::machine);
}

TEST_CASE("workers are grouped by distance, nearest group first" * needs_hwloc) {
    troupe::topology t{"pack:2 numa:2 core:4 pu:2"};
    // Eight workers on PUs 0,1,2,3,8,9,16,24.
    const std::vector<std::size_t> pus{0, 1, 2, 3, 8, 9, 16, 24};
    auto g = t.group_by_distance(0, pus);
    REQUIRE(g.size() == 4);
    CHECK(g[0] == std::vector<std::size_t>{1});     // SMT sibling
    CHECK(g[1] == std::vector<std::size_t>{2, 3});  // same NUMA node
    CHECK(g[2] == std::vector<std::size_t>{4, 5});  // same package
    CHECK(g[3] == std::vector<std::size_t>{6, 7});  // other package
    CHECK_THROWS_AS(t.group_by_distance(8, pus), std::out_of_range);
}

TEST_CASE("a bad synthetic description is rejected with a clear error") {
    CHECK_THROWS_WITH_AS(troupe::topology{"pack:banana"}, doctest::Contains("pack:banana"),
                         std::invalid_argument);
}

TEST_CASE("this machine: at least one PU; binding to PU 0 works or is refused cleanly") {
    troupe::topology t;
    CHECK(t.pu_count() >= 1);
    CHECK(t.is_this_system());
    (void)t.bind_current_thread(0);  // may be refused in containers; must not throw
    CHECK_THROWS_AS(t.bind_current_thread(t.pu_count()), std::out_of_range);
}

TEST_CASE("flat topology: one package, one core per allowed hardware thread") {
    cpu_set_t mask;
    REQUIRE(sched_getaffinity(0, sizeof mask, &mask) == 0);
    std::vector<int> allowed;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask)) allowed.push_back(c);
    const troupe::topology t = troupe::topology::flat();
    REQUIRE(t.pu_count() == allowed.size());
    CHECK(t.pu_count() == troupe::affinity_cpu_count());
    CHECK(t.core_count() == t.pu_count());
    CHECK(t.numa_count() == 1);
    CHECK(t.is_this_system());
    const std::size_t last = t.pu_count() - 1;
    CHECK(t.distance_between(last, last) == distance::same_pu);
    if (last > 0) CHECK(t.distance_between(0, last) == distance::same_package);
    CHECK_THROWS_AS(t.distance_between(0, t.pu_count()), std::out_of_range);
    // Every other worker in one group (nobody is nearer than another).
    const std::vector<std::size_t> pus{0, last, 0, last};
    auto g = t.group_by_distance(0, pus);
    REQUIRE(g.size() == (last > 0 ? 2u : 1u));
    if (last > 0) CHECK(g[0] == std::vector<std::size_t>{2});  // same PU first
    CHECK_THROWS_AS(t.bind_current_thread(t.pu_count()), std::out_of_range);
    // Binding moves the thread onto PU `last`'s CPU and nowhere else (a
    // sandbox may refuse it: then false, nothing changed); the mask is
    // restored afterwards.
    if (t.bind_current_thread(last)) {
        cpu_set_t bound;
        REQUIRE(sched_getaffinity(0, sizeof bound, &bound) == 0);
        const int bound_count = CPU_COUNT(&bound);
        const bool on_last = CPU_ISSET(allowed[last], &bound);
        REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof mask, &mask) == 0);
        CHECK(bound_count == 1);
        CHECK(on_last);
    } else {
        MESSAGE("binding refused here (sandbox?): not checked");
    }
}

TEST_CASE(
    "without hwloc, this machine is the flat topology and synthetic descriptions are refused" *
    doctest::skip(troupe::topology_has_hwloc)) {
    troupe::topology t;
    CHECK(t.pu_count() == troupe::topology::flat().pu_count());
    CHECK(t.numa_count() == 1);
    CHECK_THROWS_WITH_AS(troupe::topology{"pack:2 pu:2"}, doctest::Contains("needs hwloc"),
                         std::invalid_argument);
}
