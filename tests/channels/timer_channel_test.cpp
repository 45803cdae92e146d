// Timer channels: after/timer (one delivery, then closed), ticker
// (periodic, drops ticks for a slow receiver, stop from inside its loop).
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/thread.hpp"
#include "troupe/timer_channel.hpp"

using namespace std::chrono_literals;
using troupe::timer_clock;

TEST_CASE("after(d): delivers once, no earlier than d, then the channel is closed") {
    troupe_test::on_processors([](troupe::cluster& c) {
        troupe_test::run_in(c, [] {
            const auto start = timer_clock::now();
            auto t = troupe::after(5ms);
            const auto when = t.remove();
            CHECK(when >= start + 5ms);
            CHECK_THROWS_AS((void)t.remove(), troupe::channel_closed);
            CHECK_FALSE(t.stop());  // delivered already
        });
    });
}

TEST_CASE("after(d) in a range-for yields exactly one element; after(0) is ready at once") {
    int n = 0;
    for (auto when : troupe::after(1ms)) {
        (void)when;
        ++n;
    }
    CHECK(n == 1);
    auto now = troupe::after(0ns);
    timer_clock::time_point v;
    CHECK(now.try_remove(v) == troupe::channel_status::success);
}

TEST_CASE("timer stop before delivery: nothing is delivered, a blocked receiver is released") {
    troupe::cluster c{2};
    troupe::timer t{1h};
    std::atomic<bool> closed{false};
    troupe::thread r{c, [&] {
                         try {
                             (void)t.remove();
                         } catch (const troupe::channel_closed&) {
                             closed = true;
                         }
                     }};
    troupe_test::wait_until([&] { return t.chan().waiting_consumers() == 1; });
    CHECK(t.stop());
    r.join();
    CHECK(closed.load());
    CHECK_FALSE(t.stop());
    CHECK(t.stopped());
}

TEST_CASE("ticker: periodic deliveries in order; stop() inside its own loop ends it") {
    troupe_test::on_processors([](troupe::cluster& c) {
        troupe_test::run_in(c, [] {
            const auto start = timer_clock::now();
            troupe::ticker tick{2ms};
            std::vector<timer_clock::time_point> seen;
            for (auto when : tick) {
                seen.push_back(when);
                if (seen.size() == 5) tick.stop();
            }
            REQUIRE(seen.size() == 5);
            CHECK(seen.front() >= start + 2ms);
            for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i] > seen[i - 1]);
            CHECK(tick.stopped());
            tick.stop();  // again: nothing
        });
    });
}

TEST_CASE("ticker: a slow receiver finds at most one tick waiting (ticks dropped, not queued)") {
    troupe::ticker tick{1ms};
    std::this_thread::sleep_for(30ms);  // ~30 ticks fall due while nobody receives
    const auto t0 = timer_clock::now();
    int burst = 0;
    timer_clock::time_point v;
    while (tick.try_remove(v) == troupe::channel_status::success) ++burst;
    const auto elapsed = timer_clock::now() - t0;
    // One buffered tick, plus one per period that passed while draining.
    CHECK(burst >= 1);
    CHECK(burst <= 2 + int(elapsed / 1ms));
    CHECK(burst < 30);
}

TEST_CASE("ticker: stop from another thread releases a blocked receiver with channel_closed") {
    troupe::cluster c{2};
    troupe::ticker tick{1h};
    std::atomic<bool> closed{false};
    troupe::thread r{c, [&] {
                         try {
                             (void)tick.remove();
                         } catch (const troupe::channel_closed&) {
                             closed = true;
                         }
                     }};
    troupe_test::wait_until([&] { return tick.chan().waiting_consumers() == 1; });
    tick.stop();
    r.join();
    CHECK(closed.load());
}

TEST_CASE("ticker: a non-positive period is refused") {
    CHECK_THROWS_AS(troupe::ticker{0ns}, std::invalid_argument);
    CHECK_THROWS_AS(troupe::ticker{-1ms}, std::invalid_argument);
}

TEST_CASE("many pending timers need no thread each and are all disarmed by stop") {
    const std::size_t before = troupe::detail::timer_pending();
    {
        std::vector<std::unique_ptr<troupe::timer>> ts;
        for (int i = 0; i < troupe_test::scaled(10000); ++i)
            ts.push_back(std::make_unique<troupe::timer>(1h));
        CHECK(troupe::detail::timer_pending() >= before + std::size_t(troupe_test::scaled(10000)));
    }
    CHECK(troupe::detail::timer_pending() == before);
}
