// semaphore: counting, FIFO hand-off, release(n).
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;

TEST_CASE("a semaphore bounds concurrency to its count") {
    on_processors([](troupe::cluster& c) {
        troupe::semaphore s{3};
        std::atomic<int> inside{0}, peak{0};
        {
            std::vector<troupe::thread> ts;
            for (int i = 0; i < 16; ++i)
                ts.emplace_back(c, [&] {
                    for (int k = 0; k < 200; ++k) {
                        s.acquire();
                        int now = inside.fetch_add(1) + 1;
                        int p = peak.load();
                        while (now > p && !peak.compare_exchange_weak(p, now)) {}
                        troupe::this_thread::yield();
                        inside.fetch_sub(1);
                        s.release();
                    }
                });
        }
        CHECK(peak.load() <= 3);
        CHECK(s.count() == 3);
    });
}

TEST_CASE("release(n) hands units to waiters first (FIFO), the rest to the count") {
    troupe::cluster c{2};
    troupe::semaphore s{0};
    std::vector<int> order;
    troupe::blocking_lock order_lock;
    std::vector<troupe::thread> ts;
    for (int i = 0; i < 3; ++i) {
        ts.emplace_back(c, [&, i] {
            s.acquire();
            std::lock_guard g{order_lock};
            order.push_back(i);
        });
        while (s.waiters() != std::size_t(i + 1)) std::this_thread::yield();
    }
    s.release(5);  // 3 to the waiters, 2 remain
    ts.clear();
    CHECK(order.size() == 3);
    CHECK(s.count() == 2);
    CHECK(s.try_acquire());
    CHECK(s.try_acquire());
    CHECK_FALSE(s.try_acquire());
}

TEST_CASE("semaphore ping-pong between an OS thread and a user thread") {
    on_processors([](troupe::cluster& c) {
        troupe::semaphore ping{0}, pong{0};
        long sum = 0;
        troupe::thread t{c, [&] {
                             for (int i = 0; i < 10'000; ++i) {
                                 ping.acquire();
                                 sum += i;
                                 pong.release();
                             }
                         }};
        for (int i = 0; i < 10'000; ++i) {
            ping.release();
            pong.acquire();
        }
        t.join();
        CHECK(sum == 10'000L * 9'999 / 2);
    });
}

TEST_CASE("semaphore word transitions: units are conserved while releasers and acquirers race") {
    // Releases of 1..3 units race acquires (blocking and try) from user and
    // OS threads: every unit released is taken exactly once or still counted.
    constexpr int rounds = troupe_test::scaled(20'000);
    troupe_test::on_processors([](troupe::cluster& c) {
        troupe::semaphore s{0, "transitions"};
        std::atomic<long> taken{0};
        auto acquirer = [&](bool use_try) {
            for (int i = 0; i < rounds; ++i) {
                if (!(use_try && s.try_acquire())) s.acquire();
                taken.fetch_add(1, std::memory_order_relaxed);
            }
        };
        auto releaser = [&] {
            // 2 * rounds units in chunks of 1, 2, 3, ...
            for (long left = 2L * rounds, k = 1; left > 0; k = k % 3 + 1) {
                const long n = std::min(left, k);
                s.release(std::size_t(n));
                left -= n;
            }
        };
        {
            std::vector<troupe::thread> ts;
            std::vector<std::thread> ks;
            ts.emplace_back(c, [&] { acquirer(false); });
            ks.emplace_back([&] { acquirer(true); });
            ts.emplace_back(c, releaser);
            ks.emplace_back(releaser);
            for (auto& k : ks) k.join();
        }
        CHECK(taken.load() == 2L * rounds);
        CHECK(s.count() == std::size_t(2 * rounds));  // 4 * rounds released in all
        CHECK(s.waiters() == 0);
    });
}
