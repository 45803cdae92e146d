// The mutex statement under contention: threads lock the same locks in
// opposite and random orders (all forms, 2 to 12 locks, duplicates, mixed
// types, run-time subsets) and never deadlock (a watchdog aborts if they do)
// nor let two threads into a critical section (overlap counters, exact totals).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fixture.hpp"
#include "troupe/barging_lock.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/mcs_lock.hpp"
#include "troupe/mutex.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;

namespace {

constexpr int iterations = troupe_test::scaled(20'000, 6);
constexpr int workers = 4;

// Where threads meet: a critical section that detects overlap and counts.
struct section {
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    long total = 0;  // plain: protected by the locks (TSan checks it too)

    void enter(bool yield) {
        if (inside.fetch_add(1, std::memory_order_acq_rel) != 0) overlaps.fetch_add(1);
        ++total;
        if (yield) troupe::this_thread::yield();
        inside.fetch_sub(1, std::memory_order_acq_rel);
    }
};

// A parking lock that first yields the processor, so user threads switch in
// the middle of a multi-lock acquisition even on one processor: without the
// global order, opposite orders would then deadlock at once.
template <class Lock>
struct yielding {
    Lock lock_;
    void lock() {
        troupe::this_thread::yield();
        lock_.lock();
    }
    void unlock() noexcept { lock_.unlock(); }
};

// Thread 0 names the locks in ascending index order, thread 1 descending,
// the others in a fresh random order each time; `i` rotates through the
// four forms (statement, RAII, lambda, run-time set).
template <class Lock, std::size_t N, std::size_t... I>
void hammer(std::array<Lock, N>& locks, section& cs, int t, bool yield, std::index_sequence<I...>) {
    std::array<std::size_t, N> ord{};
    std::iota(ord.begin(), ord.end(), 0);
    if (t == 1) std::reverse(ord.begin(), ord.end());
    std::mt19937 rng(1234u + unsigned(t));
    std::vector<Lock*> set(N);
    for (int i = 0; i < iterations; ++i) {
        if (t >= 2) std::shuffle(ord.begin(), ord.end(), rng);
        const bool y = yield && i % 8 == 0;
        switch (i % 4) {
        case 0: TROUPE_MUTEX(locks[ord[I]]...) { cs.enter(y);
            }
            break;
        case 1: {
            troupe::scoped_mutex g{locks[ord[I]]...};
            cs.enter(y);
            break;
        }
        case 2: troupe::mutex(locks[ord[I]]...)([&] { cs.enter(y); }); break;
        default:
            for (std::size_t k = 0; k < N; ++k) set[k] = &locks[ord[k]];
            TROUPE_MUTEX(set) { cs.enter(y); }
        }
    }
}

// Holds `body(t)` back until all `n` threads have arrived, so that they
// really contend (thread start-up is slower than many iterations). Yields
// rather than blocks: it runs on user threads sharing one processor too.
template <class F>
auto gated(F& body, int n) {
    auto arrived = std::make_shared<std::atomic<int>>(0);
    return [&body, arrived, n](int t) {
        arrived->fetch_add(1);
        while (arrived->load() < n) troupe::this_thread::yield();
        body(t);
    };
}

// Runs `body(t)` on `workers` OS threads under a watchdog.
template <class F>
void on_os_threads(const std::string& what, F body) {
    troupe_test::watchdog w{troupe_test::current_test() + " " + what};
    auto start = gated(body, workers);
    std::vector<std::thread> ts;
    for (int t = 0; t < workers; ++t) ts.emplace_back(start, t);
    for (auto& th : ts) th.join();
}

// Runs `body(t)` on `workers` user threads of `c`.
template <class F>
void on_user_threads(troupe::cluster& c, F body) {
    auto start = gated(body, workers);
    std::vector<troupe::thread> ts;
    for (int t = 0; t < workers; ++t) ts.emplace_back(c, start, t);
    for (auto& th : ts) th.join();
}

template <class Lock, std::size_t N>
void os_threads_same_set() {
    CAPTURE(N);
    std::array<Lock, N> locks;
    section cs;
    on_os_threads("N=" + std::to_string(N),
                  [&](int t) { hammer(locks, cs, t, false, std::make_index_sequence<N>{}); });
    CHECK(cs.overlaps.load() == 0);
    CHECK(cs.total == long(workers) * iterations);
}

template <class Lock, std::size_t N>
void user_threads_same_set(bool yield, std::initializer_list<std::size_t> processors = {1, 2, 4}) {
    CAPTURE(N);
    on_processors(
        [&](troupe::cluster& c) {
            std::array<Lock, N> locks;
            section cs;
            on_user_threads(
                c, [&](int t) { hammer(locks, cs, t, yield, std::make_index_sequence<N>{}); });
            CHECK(cs.overlaps.load() == 0);
            CHECK(cs.total == long(workers) * iterations);
        },
        processors);
}

}  // namespace

TEST_CASE("OS threads, std::mutex, opposite and random orders of 2 to 12 locks") {
    os_threads_same_set<std::mutex, 2>();
    os_threads_same_set<std::mutex, 3>();
    os_threads_same_set<std::mutex, 5>();
    os_threads_same_set<std::mutex, 6>();
    os_threads_same_set<std::mutex, 8>();   // insertion sort
    os_threads_same_set<std::mutex, 12>();  // insertion sort
}

TEST_CASE("OS threads, troupe::spinlock, opposite and random orders") {
    os_threads_same_set<troupe::spinlock, 4>();
    os_threads_same_set<troupe::spinlock, 7>();
}

TEST_CASE("user threads, blocking_lock (parks, yields inside), opposite and random orders") {
    user_threads_same_set<yielding<troupe::blocking_lock>, 2>(true);
    user_threads_same_set<yielding<troupe::blocking_lock>, 4>(true);
    user_threads_same_set<yielding<troupe::blocking_lock>, 8>(true);
}

TEST_CASE("barging_lock from user threads and OS threads, opposite and random orders") {
    user_threads_same_set<yielding<troupe::barging_lock>, 2>(true);
    user_threads_same_set<yielding<troupe::barging_lock>, 5>(true);
    os_threads_same_set<troupe::barging_lock, 4>();
}

TEST_CASE("user threads, non-parking locks, opposite and random orders") {
    // These locks never park, so the section must not yield (a user thread
    // yielding while holding one would leave its processor to a spinner).
    // No more processors than cores, so holders are rarely preempted. (Not
    // mcs_lock: its waiters never yield, and on this shared 2-core machine
    // a preempted holder then stalls them for seconds.)
    user_threads_same_set<troupe::spinlock, 3>(false, {1, 2});
    user_threads_same_set<std::mutex, 6>(false, {1, 2});
    user_threads_same_set<troupe::spinlock, 9>(false, {1, 2});
}

TEST_CASE("mixed lock types in one scope, each thread naming them in its own order") {
    // OS threads may mix every kind of lock.
    struct all_kinds {
        std::mutex a;
        troupe::spinlock b;
        troupe::blocking_lock c;
        std::recursive_mutex d;
        troupe::mcs_lock e;
        troupe::owner_lock f;
    } k;
    section cs;
    on_os_threads("mixed", [&](int t) {
        std::vector<troupe::lock_ref> set{k.a, k.b, k.c, k.d, k.e, k.f, k.c};
        std::mt19937 rng(99u + unsigned(t));
        for (int i = 0; i < iterations; ++i) {
            switch (t) {
            case 0: TROUPE_MUTEX(k.a, k.b, k.c, k.d, k.e, k.f) { cs.enter(false);
                }
                break;
            case 1: TROUPE_MUTEX(k.f, k.e, k.d, k.c, k.b, k.a) { cs.enter(false);
                }
                break;
            case 2:
                troupe::mutex(k.c, k.a, k.f, k.a, k.b, k.e, k.d)([&] { cs.enter(false); });
                break;
            default:
                std::shuffle(set.begin(), set.end(), rng);
                TROUPE_MUTEX(set) { cs.enter(false); }
            }
        }
    });
    CHECK(cs.overlaps.load() == 0);
    CHECK(cs.total == long(workers) * iterations);
}

TEST_CASE("mixed parking lock types from user threads") {
    on_processors([](troupe::cluster& c) {
        yielding<troupe::blocking_lock> a, b;
        yielding<troupe::owner_lock> o;
        section cs;
        on_user_threads(c, [&](int t) {
            for (int i = 0; i < iterations; ++i) {
                const bool y = i % 8 == 0;
                if (t % 2 == 0) {
                    TROUPE_MUTEX(a, o, b) { cs.enter(y); }
                } else {
                    troupe::scoped_mutex g{b, a, o, b};
                    TROUPE_MUTEX(o) { cs.enter(y); }  // recursive: already held
                }
            }
        });
        CHECK(cs.overlaps.load() == 0);
        CHECK(cs.total == long(workers) * iterations);
    });
}

TEST_CASE("run-time random subsets with duplicates: per-lock exclusion and exact counts") {
    constexpr std::size_t nlocks = 10;
    // Each lock guards its own counter; a flag per lock detects overlap.
    struct guarded {
        std::atomic<bool> inside{false};
        long count = 0;
    };
    auto run = [](auto& locks, auto spawn) {
        std::array<guarded, nlocks> g;
        std::atomic<int> overlaps{0};
        std::array<std::atomic<long>, nlocks> expected{};
        spawn([&](int t) {
            std::mt19937 rng(7u + unsigned(t));
            using lock_type = std::remove_reference_t<decltype(locks[0])>;
            std::vector<lock_type*> set;
            std::array<long, nlocks> mine{};
            for (int i = 0; i < iterations; ++i) {
                set.clear();
                const std::size_t k = 1 + rng() % 8;
                for (std::size_t j = 0; j < k; ++j) set.push_back(&locks[rng() % nlocks]);
                TROUPE_MUTEX(set) {
                    // `set` is now sorted: duplicates are neighbours.
                    for (std::size_t j = 0; j < set.size(); ++j) {
                        if (j > 0 && set[j] == set[j - 1]) continue;
                        const std::size_t idx = std::size_t(set[j] - &locks[0]);
                        if (g[idx].inside.exchange(true)) overlaps.fetch_add(1);
                        ++g[idx].count;
                        ++mine[idx];
                    }
                    for (std::size_t j = 0; j < set.size(); ++j)
                        g[std::size_t(set[j] - &locks[0])].inside.store(false);
                }
            }
            for (std::size_t idx = 0; idx < nlocks; ++idx) expected[idx].fetch_add(mine[idx]);
        });
        CHECK(overlaps.load() == 0);
        for (std::size_t idx = 0; idx < nlocks; ++idx) CHECK(g[idx].count == expected[idx].load());
    };
    SUBCASE("OS threads, std::mutex") {
        std::array<std::mutex, nlocks> locks;
        run(locks, [](auto body) { on_os_threads("subsets", body); });
    }
    SUBCASE("user threads, blocking_lock (yielding first)") {
        on_processors([&](troupe::cluster& c) {
            std::array<yielding<troupe::blocking_lock>, nlocks> locks;
            run(locks, [&](auto body) { on_user_threads(c, body); });
        });
    }
    SUBCASE("user and OS threads together, blocking_lock") {
        on_processors(
            [&](troupe::cluster& c) {
                std::array<troupe::blocking_lock, nlocks> locks;
                run(locks, [&](auto body) {
                    troupe_test::watchdog w{"subsets mixed threads"};
                    auto start = gated(body, workers);
                    std::vector<troupe::thread> ts;
                    std::vector<std::thread> os;
                    for (int t = 0; t < workers / 2; ++t) ts.emplace_back(c, start, t);
                    for (int t = workers / 2; t < workers; ++t) os.emplace_back(start, t);
                    for (auto& th : os) th.join();
                    for (auto& th : ts) th.join();
                });
            },
            {1, 2});
    }
}
