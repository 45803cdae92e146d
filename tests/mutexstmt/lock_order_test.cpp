// detail/lock_order.hpp: the sorting networks, insertion sort, duplicate
// skipping, and acquire/release order of the mutex statement.
#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "fixture.hpp"
#include "probe_lock.hpp"
#include "troupe/detail/lock_order.hpp"

namespace {

using probe = troupe_test::probe_lock;
using probe_set = troupe_test::probe_set<16>;

// Counts compare-exchanges (and still performs them).
struct counting_order {
    int* count;
    template <class E>
    void operator()(E& a, E& b) const noexcept {
        ++*count;
        troupe::detail::handle_order{}(a, b);
    }
};

// Compare-exchanges used by the compile-time sort of N handles.
template <std::size_t N>
int network_size() {
    std::array<int, N> storage{};
    std::array<int*, N> a{};
    for (std::size_t i = 0; i < N; ++i) a[i] = &storage[i];
    int count = 0;
    troupe::detail::sort_fixed<N>(a.data(), counting_order{&count});
    return count;
}

// The compile-time sort of N handles (the variadic forms' path) puts every
// permutation of N distinct pointers in order.
template <std::size_t N>
void fixed_sorts_every_permutation() {
    CAPTURE(N);
    std::array<int, N> storage{};
    std::array<std::size_t, N> perm{};
    std::iota(perm.begin(), perm.end(), 0);
    do {
        std::array<int*, N> a{};
        for (std::size_t i = 0; i < N; ++i) a[i] = &storage[perm[i]];
        troupe::detail::sort_fixed<N>(a.data());
        for (std::size_t i = 0; i < N; ++i) REQUIRE(a[i] == &storage[i]);
    } while (std::next_permutation(perm.begin(), perm.end()));
}

// Sorts every permutation of n distinct pointers and every 0/1 input (the
// 0-1 principle: a network that sorts all 2^n of them sorts everything).
void sorts_everything(std::size_t n) {
    CAPTURE(n);
    std::vector<int> storage(n);
    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    int permutations = 0;
    do {
        std::vector<int*> a(n);
        for (std::size_t i = 0; i < n; ++i) a[i] = &storage[perm[i]];
        troupe::detail::sort_handles(a.data(), n);
        for (std::size_t i = 0; i < n; ++i) REQUIRE(a[i] == &storage[i]);
        ++permutations;
    } while (std::next_permutation(perm.begin(), perm.end()));
    int expected = 1;
    for (std::size_t i = 2; i <= n; ++i) expected *= int(i);
    CHECK(permutations == expected);

    int two[2];
    for (unsigned bits = 0; bits < (1u << n); ++bits) {
        std::vector<int*> a(n);
        for (std::size_t i = 0; i < n; ++i) a[i] = &two[(bits >> i) & 1];
        troupe::detail::sort_handles(a.data(), n);
        REQUIRE(std::is_sorted(a.begin(), a.end(), troupe::detail::handle_before{}));
    }
}

}  // namespace

TEST_CASE("the networks use the fewest known compare-exchanges: 1, 3, 5, 9, 12, 16, 19") {
    CHECK(network_size<2>() == 1);
    CHECK(network_size<3>() == 3);
    CHECK(network_size<4>() == 5);
    CHECK(network_size<5>() == 9);
    CHECK(network_size<6>() == 12);
    CHECK(network_size<7>() == 16);
    CHECK(network_size<8>() == 19);
}

TEST_CASE("beyond 8, insertion sort as a network: n(n-1)/2 compare-exchanges") {
    CHECK(network_size<1>() == 0);
    CHECK(network_size<9>() == 36);
    CHECK(network_size<16>() == 120);
}

TEST_CASE("run-time counts from 0 to 8 sort every permutation and every 0/1 input") {
    for (std::size_t n = 0; n <= 8; ++n) sorts_everything(n);
}

TEST_CASE("compile-time counts from 1 to 9 (8 with sanitizers) sort every permutation") {
    fixed_sorts_every_permutation<1>();
    fixed_sorts_every_permutation<2>();
    fixed_sorts_every_permutation<3>();
    fixed_sorts_every_permutation<4>();
    fixed_sorts_every_permutation<5>();
    fixed_sorts_every_permutation<6>();
    fixed_sorts_every_permutation<7>();
    fixed_sorts_every_permutation<8>();
    if constexpr (!troupe_test::sanitized)
        fixed_sorts_every_permutation<9>();  // 362880 orders: too slow under sanitizers
}

TEST_CASE("compile-time counts beyond 16 fall back to the insertion sort loop") {
    std::mt19937 rng{3};
    std::array<int, 20> storage{};
    for (int round = 0; round < 200; ++round) {
        std::array<int*, 20> a{};
        for (auto& e : a) e = &storage[rng() % storage.size()];
        auto expected = a;
        std::sort(expected.begin(), expected.end(), troupe::detail::handle_before{});
        troupe::detail::sort_fixed<20>(a.data());
        REQUIRE(a == expected);
    }
}

TEST_CASE("insertion sort beyond 6 handles random orders with duplicates") {
    std::mt19937 rng{7};
    std::vector<int> storage(40);
    for (int round = 0; round < 2000; ++round) {
        const std::size_t n = 7 + rng() % 30;
        std::vector<int*> a(n);
        for (auto& e : a) e = &storage[rng() % (round % 2 ? storage.size() : 5)];
        std::vector<int*> expected = a;
        std::sort(expected.begin(), expected.end(), troupe::detail::handle_before{});
        troupe::detail::sort_handles(a.data(), n);
        REQUIRE(a == expected);
    }
}

TEST_CASE("lock_ref orders by address, then by type, whatever the input order") {
    // An object and its first member share an address but are two locks.
    struct outer {
        probe inner;
        void lock() {}
        void unlock() noexcept {}
    };
    struct {
        outer o;
        probe later;  // above o in memory
    } s;
    troupe::lock_ref x{s.o}, y{s.o.inner}, z{s.later};
    REQUIRE(x.address() == y.address());
    CHECK_FALSE(x == y);
    CHECK(x == troupe::lock_ref{s.o});

    const bool x_first = troupe::detail::handle_before{}(x, y);
    CHECK(x_first != troupe::detail::handle_before{}(y, x));
    std::array<std::array<troupe::lock_ref, 3>, 3> inputs{{{x, y, z}, {y, z, x}, {z, x, y}}};
    for (auto in : inputs) {
        troupe::detail::sort_handles(in.data(), in.size());
        CHECK(in[0] == (x_first ? x : y));
        CHECK(in[1] == (x_first ? y : x));
        CHECK(in[2] == z);
    }
}

TEST_CASE("acquire_sorted takes each distinct lock once, in order; release reverses") {
    probe_set s;
    auto& p = s.p;
    std::array<probe*, 7> a{&p[3], &p[1], &p[3], &p[0], &p[1], &p[3], &p[5]};
    troupe::detail::sort_handles(a.data(), a.size());
    troupe::detail::acquire_sorted(a.data(), a.size());
    CHECK(s.journal == std::vector<int>{1, 2, 4, 6});
    troupe::detail::release_sorted(a.data(), a.size());
    CHECK(s.journal == std::vector<int>{1, 2, 4, 6, -6, -4, -2, -1});
}

TEST_CASE("a throwing lock() releases the locks taken before it, in reverse") {
    probe_set s;
    auto& p = s.p;
    p[4].throw_on_lock = true;
    std::array<probe*, 8> a{&p[6], &p[4], &p[2], &p[0], &p[2], &p[7], &p[1], &p[5]};
    troupe::detail::sort_handles(a.data(), a.size());
    CHECK_THROWS_AS(troupe::detail::acquire_sorted(a.data(), a.size()), std::runtime_error);
    CHECK(s.journal == std::vector<int>{1, 2, 3, -3, -2, -1});
    for (const auto& q : p) CHECK_FALSE(q.held);
}
