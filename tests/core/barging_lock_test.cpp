// barging_lock: exclusion under every transition, the two modes (normal:
// running threads barge; starved: FIFO hand-off) driven by an injected
// clock, condition_variable use, misuse reports.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "select_protocol.hpp"
#include "troupe/barging_lock.hpp"
#include "troupe/condition_variable.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;
using troupe_test::run_in;
using troupe_test::wait_until;
using namespace std::chrono_literals;

namespace {

constexpr int rounds = troupe_test::scaled(20'000);

// A clock the tests advance by hand (the lock's `now` seam).
std::atomic<std::int64_t> manual_ns{0};
troupe::barging_lock::clock::time_point manual_now() noexcept {
    return troupe::barging_lock::clock::time_point{std::chrono::nanoseconds{manual_ns.load()}};
}
troupe::barging_lock::options manual_clock() {
    manual_ns = 0;
    return {.starvation_after = 1ms, .now = &manual_now};
}
void advance(std::chrono::nanoseconds d) { manual_ns += d.count(); }

// Hammers `l` from user threads and OS threads with lock, try_lock and an
// exclusive select clause; the critical section detects overlap and loses
// no increments.
void transitions(troupe::cluster& c, troupe::barging_lock& l, int users, int os) {
    long counter = 0;
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    std::atomic<int> bad_unregister{0};
    auto critical = [&] {
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlaps.fetch_add(1);
        if (!l.owned_by_caller()) overlaps.fetch_add(1);
        ++counter;
        inside.fetch_sub(1, std::memory_order_relaxed);
    };
    auto body = [&](int kind) {
        for (int i = 0; i < rounds; ++i) {
            switch ((kind + i) % 3) {
            case 0: {
                std::lock_guard g{l};
                critical();
                break;
            }
            case 1:
                if (!l.try_lock()) l.lock();
                critical();
                l.unlock();
                break;
            default: {
                // One exclusive clause, as waituntil drives it: won at
                // registration (a barge) or by hand-off; held until unregister.
                troupe_test::status_word status{0};
                troupe::select_node n{troupe::this_context(), status};
                if (!l.register_select(n)) {
                    do troupe::park();
                    while (status.load() != troupe_test::won_by(n));
                }
                critical();
                if (l.unregister_select(n)) bad_unregister.fetch_add(1);
                break;
            }
            }
            if (i % 256 == 0) troupe::this_thread::yield();
        }
    };
    {
        std::vector<troupe::thread> ts;
        std::vector<std::thread> ks;
        for (int i = 0; i < users; ++i) ts.emplace_back(c, [&, i] { body(i); });
        for (int i = 0; i < os; ++i) ks.emplace_back([&, i] { body(i + 1); });
        for (auto& k : ks) k.join();
    }
    CHECK(overlaps.load() == 0);
    CHECK(bad_unregister.load() == 0);
    CHECK(counter == long(users + os) * rounds);
    // Back to "free, nobody waits".
    CHECK(l.waiters() == 0);
    CHECK(l.try_lock());
    l.unlock();
}

}  // namespace

TEST_CASE("barging_lock: exclusion from user threads and OS threads, every transition") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        troupe::barging_lock l{"transitions"};
        transitions(c, l, 3, 2);
    });
}

TEST_CASE("barging_lock: exclusion with every unlock a starved hand-off") {
    // starvation_after 0: every unlock that finds a waiter hands off (FIFO).
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        troupe::barging_lock l{"fifo", {.starvation_after = 0ns}};
        transitions(c, l, 2, 2);
    });
}

TEST_CASE("barging_lock: normal mode lets the running thread barge past a woken waiter") {
    // One processor: the woken waiter cannot run until we block, so what we
    // observe right after unlock is exactly the unlock's decision.
    troupe::cluster c{1};
    troupe::barging_lock l{"normal", manual_clock()};
    run_in(c, [&] {
        l.lock();
        troupe::thread w{c, [&] {
                             l.lock();
                             l.unlock();
                         }};
        wait_until([&] { return l.waiters() == 1; });
        advance(500us);  // waited less than starvation_after
        l.unlock();      // wakes it to compete, frees the lock
        CHECK(l.waiters() == 0);
        CHECK(l.try_lock());  // barging: the lock was free
        l.unlock();
        CHECK(l.starved_handoffs() == 0);
        w.join();  // we block: the waiter runs, retries, gets the free lock
    });
    CHECK(l.starved_handoffs() == 0);
}

TEST_CASE("barging_lock: a waiter that waited too long is handed the lock (starved mode)") {
    troupe::cluster c{1};
    troupe::barging_lock l{"starved", manual_clock()};
    run_in(c, [&] {
        bool got = false;
        l.lock();
        troupe::thread w{c, [&] {
                             l.lock();
                             got = true;
                             l.unlock();
                         }};
        wait_until([&] { return l.waiters() == 1; });
        advance(1ms);  // it has now waited starvation_after
        l.unlock();    // hands it the lock: nobody can barge
        CHECK_FALSE(l.try_lock());
        CHECK(l.starved_handoffs() == 1);
        CHECK_FALSE(got);
        w.join();
        CHECK(got);
        CHECK(l.try_lock());
        l.unlock();
    });
}

TEST_CASE("barging_lock: a woken waiter that never gets to run is handed the lock in flight") {
    // The running thread keeps barging on the only processor, so the woken
    // waiter never retries; once it has waited too long an unlock names it
    // the owner, and our next lock() blocks, which lets it run.
    troupe::cluster c{1};
    troupe::barging_lock l{"in flight", manual_clock()};
    run_in(c, [&] {
        bool got = false;
        l.lock();
        troupe::thread w{c, [&] {
                             l.lock();
                             got = true;
                             l.unlock();
                         }};
        wait_until([&] { return l.waiters() == 1; });
        l.unlock();  // young: woken to compete, in flight
        advance(2ms);
        int barges = 0;
        while (barges < 1000 && l.try_lock()) {
            l.unlock();
            ++barges;
        }
        CHECK(barges < 1000);  // an unlock handed it over (every 16th looks)
        CHECK(l.starved_handoffs() == 1);
        CHECK_FALSE(got);
        l.lock();  // blocks until the waiter ran and released it
        CHECK(got);
        l.unlock();
        w.join();
    });
}

TEST_CASE("barging_lock: a woken waiter that loses keeps its place at the head") {
    troupe::cluster c{1};
    troupe::barging_lock l{"head", manual_clock()};
    run_in(c, [&] {
        std::vector<int> order;
        l.lock();
        troupe::thread first{c, [&] {
                                 l.lock();
                                 order.push_back(1);
                                 l.unlock();
                             }};
        wait_until([&] { return l.waiters() == 1; });
        advance(600us);
        troupe::thread second{c, [&] {
                                  l.lock();
                                  order.push_back(2);
                                  l.unlock();
                              }};
        wait_until([&] { return l.waiters() == 2; });
        l.unlock();           // first (600 us) is woken to compete
        CHECK(l.try_lock());  // we barge before it runs
        // Let it run: it finds the lock held, queues again at the head.
        wait_until([&] { return l.waiters() == 2; });
        advance(500us);  // first: 1.1 ms (from its first queueing), second: 0.5 ms
        l.unlock();      // the head has starved: handed to first
        CHECK(l.starved_handoffs() == 1);
        CHECK_FALSE(l.try_lock());
        first.join();
        second.join();
        CHECK(order == std::vector<int>{1, 2});
    });
}

TEST_CASE("barging_lock: a stream of bargers cannot starve a waiter (real clock)") {
    // Without the starved hand-off this never ends on one processor: the
    // barger never blocks, so the woken waiter never runs.
    on_processors(
        [](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            troupe::barging_lock l{"stream"};
            std::atomic<bool> got{false};
            run_in(c, [&] {
                l.lock();
                troupe::thread w{c, [&] {
                                     l.lock();
                                     got = true;
                                     l.unlock();
                                 }};
                wait_until([&] { return l.waiters() == 1; });
                l.unlock();
                while (!got.load()) {
                    l.lock();
                    l.unlock();
                }
                w.join();
            });
            CHECK(got.load());
        },
        {1, 2});
}

TEST_CASE("barging_lock: OS threads spin, then queue; exclusion through both") {
    // The OS-thread spin (spin_then_barge) beside every other transition:
    // OS threads poll and barge, their spin runs out behind the long
    // critical sections (every 16th holds the lock for about 10 spin
    // budgets) so they queue, are woken and retry; user threads queue at
    // once. A lost or doubled increment, an overlap, or a lock left with W
    // and nobody to wake (a hang, caught by the watchdog) fails it. Run with
    // the default spin and with a long one (more barges from the spin).
    for (int spins : {troupe::defaults::core::barging_spins, 64}) {
        CAPTURE(spins);
        on_processors([spins](troupe::cluster& c) {
            troupe_test::leak_check no_leaks;
            troupe::barging_lock l{"spin", {.spins = spins}};
            long counter = 0;  // guarded by l
            std::atomic<int> inside{0};
            std::atomic<int> overlaps{0};
            auto body = [&](int id) {
                for (int i = 0; i < rounds; ++i) {
                    l.lock();
                    if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlaps.fetch_add(1);
                    if (!l.owned_by_caller()) overlaps.fetch_add(1);
                    ++counter;
                    if ((i + id) % 16 == 0)
                        for (int k = 0; k < 2000; ++k) troupe::detail::cpu_relax();
                    inside.fetch_sub(1, std::memory_order_relaxed);
                    l.unlock();
                }
            };
            {
                std::vector<troupe::thread> ts;
                std::vector<std::thread> ks;
                for (int i = 0; i < 2; ++i) ts.emplace_back(c, [&, i] { body(i); });
                for (int i = 0; i < 3; ++i) ks.emplace_back([&, i] { body(2 + i); });
                for (auto& k : ks) k.join();
            }
            CHECK(overlaps.load() == 0);
            CHECK(counter == 5L * rounds);
            CHECK(l.waiters() == 0);
            CHECK(l.try_lock());
            l.unlock();
        });
    }
}

TEST_CASE("barging_lock: an OS thread's spin is bounded, and its wait counts from queueing") {
    // We hold the lock and never release it until the waiter has queued: an
    // unbounded spin would never queue (the watchdog fails the test). With
    // the injected clock, 1 ms after it queued our unlock hands it the lock
    // (starved mode), so nothing can barge: try_lock fails at once.
    troupe_test::watchdog dog{troupe_test::current_test()};
    troupe::barging_lock l{"bounded", manual_clock()};
    std::atomic<bool> got{false};
    std::atomic<bool> release{false};
    l.lock();
    std::thread t{[&] {
        l.lock();
        got = true;
        // Hold it until we have looked: the waiter runs on its own core and
        // could otherwise unlock before our try_lock.
        wait_until([&] { return release.load(); });
        l.unlock();
    }};
    wait_until([&] { return l.waiters() == 1; });
    advance(1ms);
    l.unlock();
    CHECK(l.starved_handoffs() == 1);
    CHECK_FALSE(l.try_lock());  // the word names the waiter (B4), or it holds it
    release = true;
    t.join();
    CHECK(got.load());
    CHECK(l.try_lock());
    l.unlock();
}

TEST_CASE("barging_lock: a spinning OS thread cannot pass a starved waiter") {
    // A long spin (about 50 ms) so that the second thread is still spinning
    // when we unlock: the starved hand-off names the queued waiter the owner
    // in the same store that frees us, so the spinner's poll never sees the
    // word free and the order is the queued waiter first. (If the spinner
    // has not started polling yet the order is the same; the rounds make
    // the spinning case the common one.)
    troupe_test::watchdog dog{troupe_test::current_test()};
    for (int round = 0; round < 5; ++round) {
        CAPTURE(round);
        troupe::barging_lock l{"starved spin",
                               {.starvation_after = 1ms, .now = &manual_now, .spins = 1 << 16}};
        manual_ns = 0;
        std::vector<int> order;  // guarded by l
        l.lock();
        std::thread queued{[&] {
            l.lock();
            order.push_back(1);
            l.unlock();
        }};
        wait_until([&] { return l.waiters() == 1; });  // its spin ran out
        advance(1ms);                                  // now starved
        std::atomic<bool> spinning{false};
        std::thread spinner{[&] {
            spinning = true;
            l.lock();
            order.push_back(2);
            l.unlock();
        }};
        wait_until([&] { return spinning.load(); });
        l.unlock();
        queued.join();
        spinner.join();
        CHECK(l.starved_handoffs() >= 1);
        CHECK(order == std::vector<int>{1, 2});
    }
}

TEST_CASE("barging_lock: works with condition_variable (no morphing)") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        troupe::barging_lock l{"cv"};
        troupe::condition_variable cv;
        int stage = 0;
        constexpr int n = 200;
        troupe::thread a{c, [&] {
                             for (int i = 0; i < n; ++i) {
                                 std::unique_lock g{l};
                                 cv.wait(l, [&] { return stage % 2 == 0; });
                                 ++stage;
                                 cv.notify_all();
                             }
                         }};
        std::thread b{[&] {
            for (int i = 0; i < n; ++i) {
                std::unique_lock g{l};
                cv.wait(l, [&] { return stage % 2 == 1; });
                ++stage;
                cv.notify_all();
            }
        }};
        b.join();
        a.join();
        CHECK(stage == 2 * n);
    });
}

TEST_CASE("barging_lock: misuse is reported, naming the lock") {
    troupe_test::misuse_recorder rec;
    troupe::barging_lock l{"ledger"};
    l.unlock();  // not held (reported in every build: one compare)
    CHECK(rec.last().find("barging_lock 'ledger'") != std::string::npos);
    CHECK(rec.last().find("unlocked while not held") != std::string::npos);
    l.lock();
    std::thread other{[&] { l.unlock(); }};
    other.join();
    CHECK(rec.last().find("unlocked by a thread that does not hold it") != std::string::npos);
    CHECK(l.owned_by_caller());  // the bad unlock had no effect
    l.lock();                    // reported instead of deadlocking
    CHECK(rec.last().find("locked again") != std::string::npos);
    l.unlock();
    if constexpr (!troupe::checked_build) return;  // the rest is checked builds only
    {
        alignas(troupe::barging_lock) unsigned char storage[sizeof(troupe::barging_lock)];
        auto* held = new (storage) troupe::barging_lock{"held"};
        held->lock();
        held->~barging_lock();
        CHECK(rec.last().find("barging_lock 'held'") != std::string::npos);
        CHECK(rec.last().find("destroyed while held") != std::string::npos);
    }
}
