// The select_node protocol, driven directly (waituntil is built on it).
#include <atomic>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "select_protocol.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/future.hpp"
#include "troupe/select.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"

using namespace std::chrono_literals;
using troupe_test::on_processors;
using troupe_test::run_in;
using troupe_test::select_either;
using troupe_test::status_word;
using troupe_test::won_by;

constexpr int rounds = troupe_test::scaled(3'000);

TEST_CASE("register on a ready resource wins at once; on an unready one it queues") {
    troupe::future<int> f;
    f.fulfil(1);
    status_word st{0};
    troupe::select_node n{troupe::this_context(), st};
    CHECK(f.register_select(n));
    CHECK(st.load() == won_by(n));
    CHECK_FALSE(f.unregister_select(n));

    troupe::future<int> g;
    status_word st2{0};
    troupe::select_node m{troupe::this_context(), st2};
    CHECK_FALSE(g.register_select(m));
    CHECK(g.waiters() == 1);
    CHECK_FALSE(g.unregister_select(m));
    CHECK(g.waiters() == 0);
    CHECK(st2.load() == 0);  // nobody claimed it
}

TEST_CASE("a resource satisfied from another thread wakes the selector (both orders)") {
    on_processors([](troupe::cluster& c) {
        for (int i = 0; i < rounds; ++i) {
            troupe::future<int> f;
            troupe::future<int> never;
            // Half the rounds fulfil before the selector registers.
            troupe::thread t{c, [&] {
                                 if (i % 2) troupe::this_thread::yield();
                                 f.fulfil(i);
                             }};
            int w = 0;
            run_in(c, [&] { w = select_either(never, f); });
            t.join();
            CHECK(w == 1);
            CHECK(f.get() == i);
            CHECK(never.waiters() == 0);  // unregistered
        }
    });
}

TEST_CASE("two resources racing for one exclusive selector: exactly one wins") {
    on_processors([](troupe::cluster& c) {
        int wins[2] = {0, 0};
        for (int i = 0; i < rounds; ++i) {
            troupe::future<int> a, b;
            int w = -1;
            troupe::thread selector{c, [&] { w = select_either(a, b); }};
            troupe::thread fa{c, [&] { a.fulfil(1); }};
            troupe::thread fb{c, [&] { b.fulfil(2); }};
            selector.join();
            REQUIRE((w == 0 || w == 1));
            ++wins[w];
        }
        CHECK(wins[0] + wins[1] == rounds);
    });
}

TEST_CASE(
    "a lock clause that loses the race is not acquired; one that wins is held until unregister") {
    on_processors([](troupe::cluster& c) {
        int lock_wins = 0;
        for (int i = 0; i < rounds; ++i) {
            troupe::blocking_lock l;
            troupe::future<int> f;
            std::atomic<bool> holder_ready{false};
            std::atomic<bool> release{false};
            troupe::thread holder{c, [&] {
                                      l.lock();
                                      holder_ready = true;
                                      while (!release.load()) troupe::this_thread::yield();
                                      l.unlock();  // races with the fulfil below
                                  }};
            while (!holder_ready.load()) std::this_thread::yield();
            int w = -1;
            bool held_in_body = false, held_after = true;
            troupe::thread selector{c, [&] {
                                        status_word st{0};
                                        troupe::select_node nl{troupe::this_context(), st};
                                        troupe::select_node nf{troupe::this_context(), st};
                                        REQUIRE_FALSE(l.register_select(nl));  // held: queued
                                        if (!f.register_select(nf)) {
                                            release = true;
                                            troupe::park();
                                        } else {
                                            release = true;
                                        }
                                        w = st.load() == won_by(nl) ? 0 : 1;
                                        held_in_body = l.owned_by_caller();
                                        l.unregister_select(nl);
                                        f.unregister_select(nf);
                                        held_after = l.owned_by_caller();
                                    }};
            troupe::thread fulfiller{c, [&] {
                                         while (!release.load()) troupe::this_thread::yield();
                                         f.fulfil(0);
                                     }};
            selector.join();
            holder.join();
            fulfiller.join();
            lock_wins += w == 0;
            CHECK(held_in_body == (w == 0));
            CHECK_FALSE(held_after);
            CHECK(l.try_lock());  // nobody kept it
            l.unlock();
        }
        MESSAGE("lock won " << lock_wins << " of " << rounds);
    });
}

TEST_CASE("an owner_lock clause that loses at registration releases no level (no over-release)") {
    troupe::cluster c{2};
    run_in(c, [&] {
        troupe::owner_lock l;
        troupe::future<int> f;
        l.lock();  // depth 1, held before the statement
        status_word st{0};
        troupe::select_node nf{troupe::this_context(), st};
        troupe::select_node nl{troupe::this_context(), st};
        CHECK_FALSE(f.register_select(nf));
        f.fulfil(3);                         // wins the statement asynchronously
        CHECK_FALSE(l.register_select(nl));  // lost: must not take a level
        troupe::park();                      // the fulfil's unpark
        CHECK(st.load() == won_by(nf));
        f.unregister_select(nf);
        CHECK_FALSE(l.unregister_select(nl));
        CHECK(l.owned_by_caller());  // still depth 1
        l.unlock();
        CHECK_FALSE(l.owned_by_caller());
    });
}

TEST_CASE("timeout is selectable: it fires when nothing else happens, and is disarmed otherwise") {
    on_processors(
        [](troupe::cluster& c) {
            run_in(c, [&] {
                troupe::future<int> never;
                troupe::timeout t{1ms};
                CHECK(select_either(never, t) == 1);

                troupe::future<int> ready;
                ready.fulfil(1);
                troupe::timeout long_one{std::chrono::hours(1)};
                CHECK(select_either(long_one, ready) == 1);  // registration disarmed it

                troupe::timeout zero{0ms};
                CHECK(select_either(zero, never) == 0);
            });
        },
        {1, 2});
}

TEST_CASE("general mode: the park counter wakes the waiter once per park until all are satisfied") {
    on_processors([](troupe::cluster& c) {
        for (int i = 0; i < rounds / 10; ++i) {
            troupe::future<int> a, b;
            troupe::semaphore s{0};
            std::atomic<int> satisfied_seen{0};
            troupe::thread waiter{c, [&] {
                                      status_word sa{0}, sb{0}, ss{0};
                                      std::atomic<int> counter{0};
                                      troupe::select_node na{troupe::this_context(), sa, counter};
                                      troupe::select_node nb{troupe::this_context(), sb, counter};
                                      troupe::select_node ns{troupe::this_context(), ss, counter};
                                      a.register_select(na);
                                      b.register_select(nb);
                                      s.register_select(ns);
                                      auto all = [&] {
                                          return sa.load() >= 2 && sb.load() >= 2 && ss.load() >= 2;
                                      };
                                      while (!all())
                                          if (counter.fetch_sub(1) - 1 < 0) troupe::park();
                                      satisfied_seen = 3;
                                      a.unregister_select(na);
                                      b.unregister_select(nb);
                                      // The semaphore unit was handed over and its body has not
                                      // "run" (status sat): unregister says it must still run.
                                      CHECK(s.unregister_select(ns));
                                  }};
            troupe::thread x{c, [&] { a.fulfil(1); }};
            troupe::thread y{c, [&] { b.fulfil(2); }};
            s.release();
            waiter.join();
            CHECK(satisfied_seen.load() == 3);
            CHECK(s.count() == 0);
        }
    });
}
