// The mutex statement used alone: the header and the standard library, no
// troupe library linked (this executable's only dependencies are the
// mutexstmt headers, doctest and threads). std::mutex, std::recursive_mutex
// and a user-defined lock, from std::threads.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "scale.hpp"
#include "troupe/mutex.hpp"

namespace {

constexpr int iterations = troupe_test::scaled(20'000);

// A user-defined lock: only lock() and unlock().
class ticket_lock {
public:
    void lock() noexcept {
        const unsigned mine = next_.fetch_add(1, std::memory_order_relaxed);
        while (serving_.load(std::memory_order_acquire) != mine) std::this_thread::yield();
    }
    void unlock() noexcept { serving_.fetch_add(1, std::memory_order_release); }

private:
    std::atomic<unsigned> next_{0};
    std::atomic<unsigned> serving_{0};
};

}  // namespace

TEST_CASE("std::mutex, std::recursive_mutex and a user lock, opposite orders, 4 threads") {
    std::mutex a;
    std::recursive_mutex b;
    ticket_lock c;
    std::array<std::mutex, 7> more;
    std::atomic<int> inside{0}, overlaps{0};
    long total = 0;
    long set_total = 0;
    auto cs = [&] {
        if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
        ++total;
        inside.fetch_sub(1);
    };
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&, t] {
            std::vector<std::mutex*> set(more.size());
            std::iota(set.begin(), set.end(), &more[0]);
            std::mt19937 rng{unsigned(t)};
            for (int i = 0; i < iterations; ++i) {
                if (t == 0) {
                    TROUPE_MUTEX(a, b, c) { cs(); }
                } else if (t == 1) {
                    troupe::scoped_mutex g{c, b, a, c};
                    cs();
                } else if (t == 2) {
                    troupe::mutex(b, c, a)(cs);
                } else {
                    std::shuffle(set.begin(), set.end(), rng);
                    TROUPE_MUTEX(set) { ++set_total; }  // a run-time set
                    TROUPE_MUTEX(b, a, c, a) { cs(); }
                }
            }
        });
    for (auto& t : ts) t.join();
    CHECK(overlaps.load() == 0);
    CHECK(total == 4L * iterations);
    CHECK(set_total == iterations);
}

TEST_CASE("exceptions release std::mutex locks, which can be taken again") {
    std::mutex a, b;
    CHECK_THROWS_AS(([&] {
                        TROUPE_MUTEX(b, a) { throw std::runtime_error("x"); }
                    }()),
                    std::runtime_error);
    CHECK(a.try_lock());
    CHECK(b.try_lock());
    a.unlock();
    b.unlock();
    CHECK(troupe::mutex(a, b, a)([] { return 3; }) == 3);
}
