// troupe/mutex.hpp: the statement, RAII and lambda forms, their order,
// duplicates, release on every exit path, mixed lock types, the run-time form.
#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "fixture.hpp"
#include "probe_lock.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/mcs_lock.hpp"
#include "troupe/mutex.hpp"
#include "troupe/sout.hpp"
#include "troupe/spinlock.hpp"

namespace {

using probe = troupe_test::probe_lock;
using probes = troupe_test::probe_set<12>;

std::vector<int> up(std::initializer_list<int> ids) { return ids; }

// Whether another thread fails to take `l` now (so someone holds it).
template <class L>
bool held_elsewhere(L& l) {
    bool got = true;
    std::thread t{[&] {
        got = l.try_lock();
        if (got) l.unlock();
    }};
    t.join();
    return !got;
}

template <class... Ls>
concept statement_accepts = requires(Ls&... ls) {
    troupe::detail::make_scope(ls...);
};
template <class... Ls>
concept lambda_accepts = requires(Ls&... ls) {
    troupe::mutex(ls...);
};

}  // namespace

// ---------------------------------------------------------------- static

static_assert(troupe::lockable<std::mutex>);
static_assert(troupe::lockable<std::recursive_mutex>);
static_assert(troupe::lockable<troupe::spinlock>);
static_assert(troupe::lockable<troupe::mcs_lock>);
static_assert(troupe::lockable<troupe::blocking_lock>);
static_assert(troupe::lockable<troupe::owner_lock>);
static_assert(troupe::lockable<troupe::locked_ostream>);
static_assert(troupe::lockable<probe>);
static_assert(troupe::lockable<troupe::lock_ref>);
static_assert(!troupe::lockable<int>);
static_assert(!troupe::lockable<const std::mutex>);

// An empty lock list is rejected by every form (also tests/mutexstmt/compile_fail.cpp).
static_assert(statement_accepts<std::mutex>);
static_assert(statement_accepts<std::mutex, troupe::spinlock>);
static_assert(!statement_accepts<>);
static_assert(!statement_accepts<int>);
static_assert(lambda_accepts<std::mutex>);
static_assert(!lambda_accepts<>);

// One lock costs one pointer and nothing else; guards stay put.
static_assert(sizeof(troupe::scoped_mutex<std::mutex>) == sizeof(void*));
static_assert(sizeof(troupe::scoped_mutex<std::mutex, std::mutex>) == 2 * sizeof(void*));
static_assert(sizeof(troupe::scoped_mutex<std::mutex, troupe::spinlock>) == 4 * sizeof(void*));
static_assert(!std::is_copy_constructible_v<troupe::scoped_mutex<std::mutex>>);
static_assert(!std::is_move_constructible_v<troupe::scoped_mutex<std::mutex>>);
static_assert(!std::is_move_constructible_v<troupe::scoped_mutex_range<std::mutex*>>);

// ---------------------------------------------------------------- order

TEST_CASE("locks are taken in address order and released in reverse, for 1 to 9 locks") {
    probes s;
    auto& p = s.p;
    TROUPE_MUTEX(p[0]) { CHECK(s.take() == up({1})); }
    CHECK(s.take() == up({-1}));
    TROUPE_MUTEX(p[1], p[0]) { CHECK(s.take() == up({1, 2})); }
    CHECK(s.take() == up({-2, -1}));
    TROUPE_MUTEX(p[2], p[0], p[1]) { CHECK(s.take() == up({1, 2, 3})); }
    CHECK(s.take() == up({-3, -2, -1}));
    TROUPE_MUTEX(p[3], p[1], p[0], p[2]) { CHECK(s.take() == up({1, 2, 3, 4})); }
    CHECK(s.take() == up({-4, -3, -2, -1}));
    TROUPE_MUTEX(p[4], p[2], p[0], p[3], p[1]) { CHECK(s.take() == up({1, 2, 3, 4, 5})); }
    CHECK(s.take() == up({-5, -4, -3, -2, -1}));
    TROUPE_MUTEX(p[1], p[5], p[3], p[0], p[4], p[2]) { CHECK(s.take() == up({1, 2, 3, 4, 5, 6})); }
    CHECK(s.take() == up({-6, -5, -4, -3, -2, -1}));
    TROUPE_MUTEX(p[6], p[5], p[4], p[3], p[2], p[1], p[0]) {
        CHECK(s.take() == up({1, 2, 3, 4, 5, 6, 7}));
    }
    CHECK(s.take() == up({-7, -6, -5, -4, -3, -2, -1}));
    TROUPE_MUTEX(p[8], p[0], p[7], p[1], p[6], p[2], p[5], p[3], p[4]) {
        CHECK(s.take() == up({1, 2, 3, 4, 5, 6, 7, 8, 9}));
    }
    CHECK(s.take() == up({-9, -8, -7, -6, -5, -4, -3, -2, -1}));
    CHECK(s.none_held());
}

TEST_CASE("every argument order of 4 and of 7 locks gives the same acquisition order") {
    probes s;
    std::array<std::size_t, 7> ix{};
    std::iota(ix.begin(), ix.end(), 0);
    auto& p = s.p;
    int orders = 0;
    do {
        { troupe::scoped_mutex g{p[ix[0]], p[ix[1]], p[ix[2]], p[ix[3]]}; }
        {
            troupe::scoped_mutex g{p[ix[0]], p[ix[1]], p[ix[2]], p[ix[3]],
                                   p[ix[4]], p[ix[5]], p[ix[6]]};
        }
        std::vector<int> want;
        for (std::size_t i : {ix[0], ix[1], ix[2], ix[3]}) want.push_back(int(i) + 1);
        std::sort(want.begin(), want.end());
        for (int k = 3; k >= 0; --k) want.push_back(-want[std::size_t(k)]);
        for (int id : {1, 2, 3, 4, 5, 6, 7}) want.push_back(id);
        for (int id : {7, 6, 5, 4, 3, 2, 1}) want.push_back(-id);
        REQUIRE(s.take() == want);
        ++orders;
    } while (std::next_permutation(ix.begin(), ix.end()));
    CHECK(orders == 5040);
}

TEST_CASE("a lock named twice is taken once, so non-recursive locks may repeat") {
    probes s;
    auto& p = s.p;
    TROUPE_MUTEX(p[1], p[1]) { CHECK(s.take() == up({2})); }
    CHECK(s.take() == up({-2}));
    TROUPE_MUTEX(p[2], p[0], p[2], p[1], p[0], p[2]) { CHECK(s.take() == up({1, 2, 3})); }
    CHECK(s.take() == up({-3, -2, -1}));
    // Insertion-sort path (more than 6 names).
    TROUPE_MUTEX(p[4], p[4], p[0], p[4], p[9], p[0], p[9], p[4]) {
        CHECK(s.take() == up({1, 5, 10}));
    }
    CHECK(s.take() == up({-10, -5, -1}));

    std::mutex m;  // would deadlock if taken twice
    troupe::spinlock sl;
    TROUPE_MUTEX(m, m) { CHECK(held_elsewhere(m)); }
    TROUPE_MUTEX(sl, m, sl, m, sl, m, sl) {
        CHECK(sl.is_locked());
        CHECK(held_elsewhere(m));
    }
    CHECK_FALSE(held_elsewhere(m));
    CHECK_FALSE(sl.is_locked());
}

// ---------------------------------------------------------------- exits

TEST_CASE("an exception leaving the body releases every lock, which can be taken again") {
    probes s;
    auto& p = s.p;
    std::mutex a, b;
    troupe::blocking_lock c;
    CHECK_THROWS_AS(([&] {
                        TROUPE_MUTEX(b, p[2], c, a, p[0]) {
                            CHECK(c.owned_by_caller());
                            throw std::logic_error("body failed");
                        }
                    }()),
                    std::logic_error);
    CHECK(s.none_held());
    CHECK(s.take() == up({1, 3, -3, -1}));
    CHECK_FALSE(c.owned_by_caller());
    CHECK_FALSE(held_elsewhere(a));
    CHECK_FALSE(held_elsewhere(b));

    CHECK_THROWS_AS(troupe::mutex(a, b, c)([]() -> int { throw std::out_of_range("x"); }),
                    std::out_of_range);
    CHECK_THROWS_AS(([&] {
                        troupe::scoped_mutex g{c, b, a};
                        throw 7;
                    }()),
                    int);
    // All free again: re-acquire them together.
    int ran = 0;
    TROUPE_MUTEX(a, b, c) { ++ran; }
    CHECK(ran == 1);
}

TEST_CASE("a throwing lock() releases the locks already taken and skips the body") {
    probes s;
    auto& p = s.p;
    p[3].throw_on_lock = true;
    std::mutex m;
    bool ran = false;
    SUBCASE("one lock type") {
        CHECK_THROWS_AS(([&] {
                            TROUPE_MUTEX(p[5], p[3], p[0], p[4], p[1]) { ran = true; }
                        }()),
                        std::runtime_error);
        CHECK(s.take() == up({1, 2, -2, -1}));
    }
    SUBCASE("mixed types") {
        CHECK_THROWS_AS(([&] {
                            TROUPE_MUTEX(p[5], m, p[3], p[0]) { ran = true; }
                        }()),
                        std::runtime_error);
        CHECK(s.take() == up({1, -1}));  // p[0] lies below p[3]; m anywhere
        CHECK_FALSE(held_elsewhere(m));
    }
    SUBCASE("run-time set") {
        std::vector<probe*> set{&p[7], &p[3], &p[2], &p[8]};
        CHECK_THROWS_AS(([&] {
                            TROUPE_MUTEX(set) { ran = true; }
                        }()),
                        std::runtime_error);
        CHECK(s.take() == up({3, -3}));
    }
    CHECK_FALSE(ran);
    CHECK(s.none_held());
}

TEST_CASE("break and continue act on the enclosing loop, releasing the locks") {
    probes s;
    auto& p = s.p;
    int iterations = 0;
    for (int i = 0; i < 10; ++i) {
        ++iterations;
        TROUPE_MUTEX(p[1], p[0]) {
            if (i == 3) break;  // leaves the for loop, not just the statement
            continue;           // next iteration of the for loop
        }
        FAIL("continue inside TROUPE_MUTEX must skip the rest of the loop body");
    }
    CHECK(iterations == 4);
    CHECK(s.none_held());
    CHECK(s.journal.size() == 16);

    // In a while loop, `break` ends the loop on the first pass.
    int passes = 0;
    while (true) {
        ++passes;
        TROUPE_MUTEX(p[2]) { break; }
    }
    CHECK(passes == 1);

    // In a switch, `break` leaves the switch.
    int reached = 0;
    switch (reached) {
    case 0:
        TROUPE_MUTEX(p[3], p[4]) {
            reached = 1;
            break;
        }
        reached = 2;  // not reached
        break;
    default: break;
    }
    CHECK(reached == 1);
    CHECK(s.none_held());
}

TEST_CASE("return from inside the statement releases the locks and returns the value") {
    probes s;
    auto& p = s.p;
    auto f = [&](int x) -> int {
        TROUPE_MUTEX(p[0], p[6], p[2]) {
            if (x > 0) return x * 2;
        }
        return -1;
    };
    CHECK(f(21) == 42);
    CHECK(s.take() == up({1, 3, 7, -7, -3, -1}));
    CHECK(f(0) == -1);
    CHECK(s.none_held());
}

TEST_CASE("the statement takes a single statement and leaves `else` to the outer if") {
    probes s;
    auto& p = s.p;
    int a = 0, b = 0;
    for (bool cond : {true, false}) {
        if (cond) TROUPE_MUTEX(p[0])++ a;
        else ++b;
    }
    CHECK(a == 1);
    CHECK(b == 1);
    CHECK(s.take() == up({1, -1}));
}

TEST_CASE("nested statements over recursive locks and over distinct locks") {
    std::recursive_mutex r;
    troupe::owner_lock o;
    probes s;
    int depth = 0;
    TROUPE_MUTEX(r, o, s.p[0]) {
        TROUPE_MUTEX(o, r) {
            ++depth;
            TROUPE_MUTEX(s.p[1]) { ++depth; }
        }
    }
    CHECK(depth == 2);
    CHECK(s.take() == up({1, 2, -2, -1}));
    CHECK_FALSE(held_elsewhere(r));
    CHECK_FALSE(o.owned_by_caller());
}

// ---------------------------------------------------------------- forms

TEST_CASE("RAII guard holds until destroyed") {
    probes s;
    auto& p = s.p;
    {
        troupe::scoped_mutex g{p[2], p[1]};
        static_assert(std::is_same_v<decltype(g), troupe::scoped_mutex<probe, probe>>);
        CHECK(p[1].held);
        CHECK(p[2].held);
    }
    CHECK(s.take() == up({2, 3, -3, -2}));
}

TEST_CASE("lambda form returns the body's result, computed while the locks are held") {
    probes s;
    auto& p = s.p;
    std::mutex m;
    int balance = 40;
    const int got = troupe::mutex(p[1], m, p[0])([&] {
        CHECK(p[0].held);
        CHECK(p[1].held);
        return balance + 2;
    });
    CHECK(got == 42);
    CHECK(s.none_held());
    auto owned = troupe::mutex(m)([] { return std::make_unique<int>(5); });  // move-only
    CHECK(*owned == 5);
    int& ref = troupe::mutex(m)([&]() -> int& { return balance; });  // a reference passes through
    CHECK(&ref == &balance);
    troupe::mutex(p[4])([&] { balance = 0; });  // void
    CHECK(balance == 0);
    CHECK(s.take() == up({1, 2, -2, -1, 5, -5}));
}

TEST_CASE("mixed lock types in one scope: each is held inside and free after") {
    std::mutex m;
    std::recursive_mutex rm;
    troupe::spinlock sl;
    troupe::mcs_lock mcs;
    troupe::blocking_lock bl;
    troupe::owner_lock ol;
    probes s;
    auto check_all_held = [&] {
        CHECK(held_elsewhere(m));
        CHECK(held_elsewhere(rm));
        CHECK(sl.is_locked());
        CHECK(held_elsewhere(mcs));
        CHECK(bl.owned_by_caller());
        CHECK(ol.owned_by_caller());
        CHECK(held_elsewhere(troupe::sout));
        CHECK(s.p[3].held);
    };
    TROUPE_MUTEX(s.p[3], ol, troupe::sout, bl, mcs, sl, rm, m, sl, s.p[3]) { check_all_held(); }
    troupe::mutex(m, rm, sl, mcs, bl, ol, troupe::sout, s.p[3])(check_all_held);
    {
        troupe::scoped_mutex g{troupe::sout, m, s.p[3], bl};
        CHECK(held_elsewhere(m));
        CHECK(bl.owned_by_caller());
    }
    CHECK_FALSE(held_elsewhere(m));
    CHECK_FALSE(held_elsewhere(rm));
    CHECK_FALSE(sl.is_locked());
    CHECK_FALSE(held_elsewhere(mcs));
    CHECK_FALSE(bl.owned_by_caller());
    CHECK_FALSE(ol.owned_by_caller());
    CHECK_FALSE(held_elsewhere(troupe::sout));
    CHECK(s.take() == up({4, -4, 4, -4, 4, -4}));
}

TEST_CASE("run-time form: a vector of pointers is sorted in place, duplicates taken once") {
    probes s;
    auto& p = s.p;
    std::vector<probe*> set{&p[9], &p[2], &p[9], &p[0], &p[7], &p[2], &p[4], &p[11]};
    TROUPE_MUTEX(set) { CHECK(s.take() == up({1, 3, 5, 8, 10, 12})); }
    CHECK(s.take() == up({-12, -10, -8, -5, -3, -1}));
    CHECK(std::is_sorted(set.begin(), set.end(), std::less<probe*>{}));

    std::vector<probe*> none;
    bool ran = false;
    TROUPE_MUTEX(none) { ran = true; }  // an empty run-time set locks nothing
    CHECK(ran);
    CHECK(s.journal.empty());

    probe* arr[3] = {&p[6], &p[5], &p[6]};
    {
        troupe::scoped_mutex_range g{arr};
        CHECK(s.take() == up({6, 7}));
    }
    CHECK(troupe::mutex(std::span{arr})([&] { return p[5].held && p[6].held; }));
    CHECK(s.take() == up({-7, -6, 6, 7, -7, -6}));
}

TEST_CASE("run-time form over lock_ref mixes types") {
    std::mutex m;
    troupe::blocking_lock bl;
    troupe::spinlock sl;
    probes s;
    std::vector<troupe::lock_ref> set{sl, s.p[2], m, bl, s.p[2], troupe::sout, s.p[0]};
    TROUPE_MUTEX(set) {
        CHECK(held_elsewhere(m));
        CHECK(bl.owned_by_caller());
        CHECK(sl.is_locked());
        CHECK(held_elsewhere(troupe::sout));
        CHECK(s.take() == up({1, 3}));
    }
    CHECK(s.take() == up({-3, -1}));
    CHECK_FALSE(held_elsewhere(m));
    CHECK_FALSE(bl.owned_by_caller());
    CHECK_FALSE(sl.is_locked());
    CHECK(std::is_sorted(set.begin(), set.end(), troupe::detail::handle_before{}));
}

TEST_CASE("lock_ref arguments stand for the locks they name") {
    probes s;
    std::mutex m;
    troupe::lock_ref a{s.p[2]}, b{s.p[0]}, a_again{s.p[2]}, mm{m};
    // Ordered and deduplicated by the named locks, not by the refs' own places.
    TROUPE_MUTEX(a, b, a_again) { CHECK(s.take() == up({1, 3})); }
    CHECK(s.take() == up({-3, -1}));
    const troupe::lock_ref& ca = a;
    troupe::mutex(mm, ca, b, m)([&] { CHECK(held_elsewhere(m)); });
    CHECK(s.take() == up({1, 3, -3, -1}));
    static_assert(!troupe::detail::lock_handle<troupe::lock_ref*>);
}

TEST_CASE("the statement works the same inside troupe user threads") {
    troupe_test::on_processors([](troupe::cluster& c) {
        troupe_test::run_in(c, [] {
            probes s;
            troupe::blocking_lock bl;
            std::vector<probe*> set{&s.p[3], &s.p[1]};
            TROUPE_MUTEX(s.p[2], bl, s.p[0]) {
                TROUPE_MUTEX(set) { CHECK(bl.owned_by_caller()); }
            }
            CHECK(s.take() == up({1, 3, 2, 4, -4, -2, -3, -1}));
            CHECK_FALSE(bl.owned_by_caller());
        });
    });
}
