// sleep_for and the shared timer facility.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"

using namespace std::chrono_literals;
using troupe_test::on_processors;
using clk = std::chrono::steady_clock;

TEST_CASE("sleep_for lasts at least the duration, from user and OS threads") {
    on_processors([](troupe::cluster& c) {
        std::atomic<int> short_sleeps{0};
        {
            std::vector<troupe::thread> ts;
            for (int i = 0; i < 20; ++i)
                ts.emplace_back(c, [&, i] {
                    const auto d = std::chrono::milliseconds(1 + i % 4);
                    const auto t0 = clk::now();
                    troupe::this_thread::sleep_for(d);
                    short_sleeps += clk::now() - t0 < d;  // a lower bound, not a timing assert
                });
            const auto t0 = clk::now();
            troupe::this_thread::sleep_for(2ms);
            short_sleeps += clk::now() - t0 < 2ms;
        }
        CHECK(short_sleeps.load() == 0);
    });
}

TEST_CASE("sleeping threads do not block their processor") {
    troupe::cluster c{1};
    std::atomic<bool> worker_ran{false};
    int naps = 0;
    troupe::thread sleeper{c, [&] {
                               // On one processor the worker can only run while we are parked in
                               // sleep_for; if sleeping held the processor this would never end
                               // (and the watchdog would fail the test).
                               while (!worker_ran.load()) {
                                   troupe::this_thread::sleep_for(1ms);
                                   ++naps;
                               }
                           }};
    troupe::thread worker{c, [&] { worker_ran = true; }};
    worker.join();
    sleeper.join();
    CHECK(worker_ran.load());
    CHECK(naps >= 1);
}

TEST_CASE("many timers with mixed deadlines all fire") {
    troupe::cluster c{2};
    std::atomic<int> fired{0};
    {
        std::vector<troupe::thread> ts;
        for (int i = 0; i < 200; ++i)
            ts.emplace_back(c, [&, i] {
                troupe::this_thread::sleep_for(std::chrono::microseconds((i * 7919) % 3000));
                troupe::this_thread::sleep_for(std::chrono::microseconds(i % 5));
                ++fired;
            });
    }
    CHECK(fired.load() == 200);
}
