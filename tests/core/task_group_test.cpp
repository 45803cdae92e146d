// task_group: joins all, rethrows the first exception, stops the others,
// nested spawns, reuse, reaping.
#include <atomic>
#include <stdexcept>
#include <thread>

#include "fixture.hpp"
#include "troupe/future.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/task_group.hpp"
#include "troupe/wait_group.hpp"

using troupe_test::on_processors;

TEST_CASE("task_group: wait joins every task") {
    on_processors([](troupe::cluster& c) {
        troupe::task_group g{c};
        std::atomic<int> ran{0};
        for (int i = 0; i < 100; ++i) g.spawn([&] { ran.fetch_add(1); });
        g.wait();
        CHECK(ran.load() == 100);
        CHECK(g.size() == 0);
    });
}

TEST_CASE("task_group: the first exception is rethrown and the others' token is stopped") {
    on_processors([](troupe::cluster& c) {
        troupe::task_group g{c, "fetch"};
        troupe::wait_group blocked{0};
        std::atomic<int> saw_stop{0};
        constexpr int waiters = 4;
        for (int i = 0; i < waiters; ++i) {
            blocked.add();
            g.spawn([&](troupe::stop_token tok) {
                troupe::wait_group never{1};
                blocked.done();
                try {
                    never.wait(tok);  // only a stop ends this
                } catch (const troupe::cancelled&) {
                    saw_stop.fetch_add(1);
                }
            });
        }
        blocked.wait();
        g.spawn([] { throw std::runtime_error("first"); });
        CHECK_THROWS_WITH_AS(g.wait(), "first", std::runtime_error);
        CHECK(saw_stop.load() == waiters);
        // the next round starts with a fresh token
        CHECK_FALSE(g.get_token().stop_requested());
        std::atomic<bool> stopped{true};
        g.spawn([&](troupe::stop_token t) { stopped = t.stop_requested(); });
        g.wait();
        CHECK_FALSE(stopped.load());
    });
}

TEST_CASE("task_group: only one exception is kept when all tasks throw") {
    on_processors([](troupe::cluster& c) {
        troupe::task_group g{c};
        for (int i = 0; i < 20; ++i) g.spawn([i] { throw i; });
        int caught = -1;
        try {
            g.wait();
        } catch (int v) {
            caught = v;
        }
        CHECK(caught >= 0);
        CHECK(caught < 20);
        g.wait();  // nothing left to rethrow
    });
}

TEST_CASE("task_group: tasks spawn tasks (recursive sum); usable from an OS thread") {
    on_processors([](troupe::cluster& c) {
        troupe::task_group g{c};
        std::atomic<long> sum{0};
        struct rec {
            static void go(troupe::task_group& g, std::atomic<long>& sum, long lo, long hi) {
                if (hi - lo <= 16) {
                    long s = 0;
                    for (long i = lo; i < hi; ++i) s += i;
                    sum.fetch_add(s);
                    return;
                }
                const long mid = lo + (hi - lo) / 2;
                g.spawn([&g, &sum, lo, mid] { go(g, sum, lo, mid); });
                go(g, sum, mid, hi);
            }
        };
        std::thread os{[&] {
            rec::go(g, sum, 0, 4096);
            g.wait();
        }};
        os.join();
        CHECK(sum.load() == 4096L * 4095 / 2);
    });
}

TEST_CASE("task_group: a long-lived group reaps finished tasks") {
    troupe::cluster c{2};
    troupe::task_group g{c};
    for (int i = 0; i < 1000; ++i) {
        troupe::future<void> f;
        g.spawn([&] { f.fulfil(); });
        f.get();
    }
    CHECK(g.size() < 200);  // most of the 1000 were joined by later spawns
    g.wait();
    CHECK(g.size() == 0);
}

TEST_CASE("task_group: a task that waits on its own group skips itself, joins the others") {
    on_processors([](troupe::cluster& c) {
        troupe::task_group g{c};
        std::atomic<int> children{0};
        std::atomic<int> seen{-1};
        troupe::future<void> parent_done;
        g.spawn([&] {
            for (int i = 0; i < 8; ++i) g.spawn([&] { children.fetch_add(1); });
            g.wait();  // would join itself for ever without the skip
            seen = children.load();
            parent_done.fulfil();
        });
        parent_done.get();  // no other wait() runs meanwhile
        g.wait();
        CHECK(seen.load() == 8);
        CHECK(g.size() == 0);
    });
}
