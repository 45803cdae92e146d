// barrier: phases, the completion function, arrive/wait tokens,
// arrive_and_drop, a throwing completion, too many arrivals, stop tokens.
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/barrier.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;
using troupe_test::scaled;

TEST_CASE("barrier: every phase waits for all, the completion runs once per phase, first") {
    on_processors([](troupe::cluster& c) {
        constexpr int n = 5;
        const int phases = scaled(200);
        std::atomic<int> arrived{0};
        int completions = 0;  // written by the completion only
        bool bad = false;
        troupe::barrier b{n, [&]() noexcept {
                              if (arrived.load() != n * (completions + 1)) bad = true;
                              ++completions;
                          }};
        std::atomic<int> errors{0};
        std::vector<troupe::thread> ts;
        for (int i = 0; i < n; ++i)
            ts.emplace_back(c, [&] {
                for (int p = 0; p < phases; ++p) {
                    arrived.fetch_add(1);
                    b.arrive_and_wait();
                    // everyone of phase p arrived and its completion ran
                    if (completions < p + 1 || arrived.load() < n * (p + 1)) errors.fetch_add(1);
                }
            });
        ts.clear();
        CHECK(errors.load() == 0);
        CHECK_FALSE(bad);
        CHECK(completions == phases);
        CHECK(b.phase() == std::uint32_t(phases));
    });
}

TEST_CASE("barrier: arrive returns a token; wait on a completed phase returns at once") {
    troupe::barrier b{2};
    auto t1 = b.arrive();
    CHECK(b.remaining() == 1);
    std::thread os{[&] { b.arrive_and_wait(); }};
    b.wait(t1);
    os.join();
    b.wait(t1);  // long done
    CHECK(b.phase() == 1);
    CHECK(b.remaining() == 2);
}

TEST_CASE("barrier: arrive_and_drop lowers the next phases' count") {
    on_processors([](troupe::cluster& c) {
        troupe::barrier b{3};
        std::atomic<int> rounds{0};
        troupe::thread leaver{c, [&] { b.arrive_and_drop(); }};
        std::vector<troupe::thread> ts;
        for (int i = 0; i < 2; ++i)
            ts.emplace_back(c, [&] {
                for (int p = 0; p < 10; ++p) b.arrive_and_wait();
                rounds.fetch_add(1);
            });
        ts.clear();
        leaver.join();
        CHECK(rounds.load() == 2);
        CHECK(b.expected() == 2);
    });
}

TEST_CASE("barrier: a throwing completion breaks the barrier, nobody hangs") {
    on_processors([](troupe::cluster& c) {
        int phase = 0;
        troupe::barrier b{3,
                          [&] {
                              if (++phase == 2) throw std::runtime_error("completion failed");
                          },
                          "steps"};
        std::atomic<int> broken{0}, own{0}, done{0};
        std::vector<troupe::thread> ts;
        for (int i = 0; i < 3; ++i)
            ts.emplace_back(c, [&] {
                try {
                    for (int p = 0; p < 5; ++p) b.arrive_and_wait();
                    done.fetch_add(1);
                } catch (const troupe::barrier_broken& e) {
                    CHECK(std::string(e.what()).find("barrier 'steps'") != std::string::npos);
                    broken.fetch_add(1);
                } catch (const std::runtime_error& e) {
                    CHECK(std::string(e.what()) == "completion failed");
                    own.fetch_add(1);
                }
            });
        ts.clear();
        CHECK(own.load() == 1);     // the arrival that ran it
        CHECK(broken.load() == 2);  // the others of that phase
        CHECK(done.load() == 0);
        CHECK(b.broken());
        CHECK(b.phase() == 2);  // the phase still completed
        CHECK_THROWS_AS((void)b.arrive(), troupe::barrier_broken);
    });
}

TEST_CASE("barrier: too many arrivals are reported and ignored") {
    troupe_test::misuse_recorder rec;
    troupe::barrier b{2, troupe::noop_completion{}, "pair"};
    (void)b.arrive(3);
    REQUIRE(rec.messages().size() == 1);
    CHECK(rec.last().find("barrier 'pair'") != std::string::npos);
    CHECK(rec.last().find("too many arrivals") != std::string::npos);
    CHECK(b.remaining() == 2);
    (void)b.arrive(2);
    CHECK(b.phase() == 1);
    CHECK_THROWS_AS(troupe::barrier<>(-1), std::invalid_argument);
}

TEST_CASE("barrier: wait(token, stop) is cancelled and the arrival stands") {
    on_processors([](troupe::cluster& c) {
        troupe::barrier b{2};
        troupe::stop_source stop;
        std::atomic<bool> cancelled{false};
        troupe::thread t{c, [&] {
                             auto tok = b.arrive();
                             try {
                                 b.wait(tok, stop.get_token());
                             } catch (const troupe::cancelled&) {
                                 cancelled = true;
                             }
                         }};
        troupe_test::wait_until([&] { return b.waiters() == 1; });
        stop.request_stop();
        t.join();
        CHECK(cancelled.load());
        CHECK(b.remaining() == 1);
        CHECK(b.waiters() == 0);
        b.arrive_and_wait();  // completes the phase with the standing arrival
        CHECK(b.phase() == 1);
    });
}
