// wait_group and latch: counting, waking, reuse, misuse, stop tokens, the
// select protocol (the waituntil side is in tests/waituntil/kit_select_test).
#include <atomic>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/latch.hpp"
#include "troupe/select.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"
#include "troupe/wait_group.hpp"

using troupe_test::on_processors;
using troupe_test::scaled;

TEST_CASE("wait_group: wait returns after every done, and sees the tasks' writes") {
    on_processors([](troupe::cluster& c) {
        for (int round = 0; round < scaled(50); ++round) {
            troupe::wait_group wg{0, "tasks"};
            std::vector<int> out(16, 0);
            std::vector<troupe::thread> ts;
            wg.add(out.size());
            for (std::size_t i = 0; i < out.size(); ++i)
                ts.emplace_back(c, [&, i] {
                    out[i] = int(i) + 1;  // plain write, published by done()
                    wg.done();
                });
            wg.wait();
            for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == int(i) + 1);
            CHECK(wg.count() == 0);
        }
    });
}

TEST_CASE("wait_group: many waiters, user threads and an OS thread, all released") {
    on_processors([](troupe::cluster& c) {
        troupe::wait_group wg{1};
        std::atomic<int> released{0};
        std::vector<troupe::thread> waiters;
        for (int i = 0; i < 8; ++i)
            waiters.emplace_back(c, [&] {
                wg.wait();
                released.fetch_add(1);
            });
        std::thread os{[&] {
            wg.wait();
            released.fetch_add(1);
        }};
        troupe_test::wait_until([&] { return wg.waiters() == 9; });
        CHECK(released.load() == 0);
        wg.done();
        waiters.clear();
        os.join();
        CHECK(released.load() == 9);
        // reusable once back at zero
        wg.add(2);
        wg.done();
        CHECK(wg.count() == 1);
        wg.done();
        wg.wait();
    });
}

TEST_CASE("wait_group: done without add is reported and changes nothing") {
    troupe_test::misuse_recorder rec;
    troupe::wait_group wg{0, "jobs"};
    wg.done();
    CHECK(wg.count() == 0);
    REQUIRE(rec.messages().size() == 1);
    CHECK(rec.last().find("wait_group 'jobs'") != std::string::npos);
    CHECK(rec.last().find("done() without a matching add()") != std::string::npos);
    wg.add(1);
    wg.done();
    wg.done();  // one too many
    CHECK(rec.messages().size() == 2);
    CHECK(wg.count() == 0);
    wg.wait();  // still usable
}

TEST_CASE("latch: count_down past zero is reported; arrive_and_wait; try_wait") {
    troupe_test::misuse_recorder rec;
    troupe::latch l{2, "start"};
    CHECK_FALSE(l.try_wait());
    l.count_down(3);  // past zero: refused
    REQUIRE(rec.messages().size() == 1);
    CHECK(rec.last().find("latch 'start'") != std::string::npos);
    CHECK(rec.last().find("past zero") != std::string::npos);
    CHECK(l.count() == 2);
    l.count_down();
    CHECK_FALSE(l.try_wait());
    l.arrive_and_wait();
    CHECK(l.try_wait());
    l.count_down();  // past zero again
    CHECK(rec.messages().size() == 2);
}

TEST_CASE("latch: N threads arrive_and_wait, none leaves before all arrived") {
    on_processors([](troupe::cluster& c) {
        for (int round = 0; round < scaled(100); ++round) {
            constexpr int n = 6;
            troupe::latch l{n};
            std::atomic<int> arrived{0}, early{0};
            std::vector<troupe::thread> ts;
            for (int i = 0; i < n; ++i)
                ts.emplace_back(c, [&] {
                    arrived.fetch_add(1);
                    l.arrive_and_wait();
                    if (arrived.load() != n) early.fetch_add(1);
                });
            ts.clear();
            CHECK(early.load() == 0);
        }
    });
}

TEST_CASE("wait_group and latch: wait(token) throws cancelled and changes nothing") {
    on_processors([](troupe::cluster& c) {
        troupe::wait_group wg{1, "w"};
        troupe::latch l{1, "l"};
        troupe::stop_source stop;
        std::atomic<int> cancelled{0};
        troupe::thread a{
            c, [&] {
                try {
                    wg.wait(stop.get_token());
                } catch (const troupe::cancelled& e) {
                    CHECK(std::string(e.what()).find("wait_group 'w'") != std::string::npos);
                    cancelled.fetch_add(1);
                }
            }};
        troupe::thread b{c, [&] {
                             try {
                                 l.wait(stop.get_token());
                             } catch (const troupe::cancelled&) {
                                 cancelled.fetch_add(1);
                             }
                         }};
        troupe_test::wait_until([&] { return wg.waiters() == 1 && l.waiters() == 1; });
        stop.request_stop();
        a.join();
        b.join();
        CHECK(cancelled.load() == 2);
        CHECK(wg.count() == 1);
        CHECK(wg.waiters() == 0);
        CHECK(l.waiters() == 0);
        // a stopped token fails at once, a zero counter still returns
        CHECK_THROWS_AS(wg.wait(stop.get_token()), troupe::cancelled);
        wg.done();
        l.count_down();
        wg.wait(stop.get_token());
        l.wait(stop.get_token());
    });
}

TEST_CASE("wait_group: a stop racing the last done either cancels or returns, never both") {
    on_processors([](troupe::cluster& c) {
        int returned = 0, cancelled = 0;
        for (int i = 0; i < scaled(400); ++i) {
            troupe::wait_group wg{1};
            troupe::stop_source stop;
            troupe::thread doer{c, [&] { wg.done(); }};
            troupe::thread stopper{c, [&] { stop.request_stop(); }};
            try {
                wg.wait(stop.get_token());
                ++returned;
                CHECK(wg.count() == 0);
            } catch (const troupe::cancelled&) {
                ++cancelled;
            }
            doer.join();
            stopper.join();
            CHECK(wg.waiters() == 0);
        }
        CHECK(returned + cancelled == scaled(400));
    });
}

TEST_CASE("wait_group: select protocol, plain node") {
    troupe::wait_group wg{1};
    troupe::select_node n{troupe::this_context()};
    CHECK_FALSE(wg.register_select(n));
    std::thread t{[&] { wg.done(); }};
    while (!n.released()) troupe::park();
    CHECK_FALSE(wg.unregister_select(n));
    t.join();
    troupe::select_node m{troupe::this_context()};
    CHECK(wg.register_select(m));  // zero: available at once
    wg.unregister_select(m);
}
