// lend_while_blocked: an OS thread blocked on a troupe primitive runs the
// cluster's ready user threads on its kernel thread, strands none of them
// when its wait ends, keeps its own exception state, and loses nothing
// under a bounded producer/consumer stress.
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/cluster.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;

namespace {
// Occupies the cluster's only processor until `release` is set: nothing
// else can run there, so a user thread that runs at all ran on a guest.
struct occupied {
    std::atomic<bool> running{false};
    std::atomic<bool> release{false};
    troupe::thread busy;
    explicit occupied(troupe::cluster& c)
        : busy{c, [this] {
                   running.store(true);
                   while (!release.load(std::memory_order_acquire)) troupe::detail::cpu_relax();
               }} {
        // Started before anything else is queued (else a lend could take
        // this thread instead of the one under test).
        while (!running.load()) std::this_thread::yield();
    }
};
}  // namespace

TEST_CASE("lending: a blocked OS thread runs the cluster's ready threads on its kernel thread") {
    troupe_test::watchdog w{"lending: runs ready threads"};
    troupe::cluster c{1};
    occupied p0{c};
    std::atomic<bool>& release = p0.release;
    troupe::future<std::thread::id> ran_on;
    // Queued behind `busy` on the only processor: without lending it could
    // never run, and neither could `busy` finish (this test would hang).
    troupe::thread t{c, [&] {
                         release.store(true, std::memory_order_release);
                         ran_on.fulfil(std::this_thread::get_id());
                     }};
    {
        troupe::lend_while_blocked lend{c};
        CHECK(ran_on.get() == std::this_thread::get_id());
    }
    t.join();
    p0.busy.join();
}

TEST_CASE("lending: threads made ready on the guest are handed back when the wait ends") {
    troupe_test::watchdog w{"lending: nothing stranded"};
    troupe::cluster c{1};
    occupied p0{c};
    std::atomic<bool>& release = p0.release;
    troupe::future<void> for_u, for_main;
    std::atomic<bool> u_ran{false};
    troupe::thread u{c, [&] {
                         for_u.get();  // parks; woken by t, on the guest
                         u_ran = true;
                     }};
    troupe::thread t{c, [&] {
                         for_u.fulfil();     // u goes to the guest's hand-off slot
                         for_main.fulfil();  // our wait is over: the guest stops after t
                     }};
    {
        troupe::lend_while_blocked lend{c};
        for_main.get();
    }
    // No lending from here on: u, left on the guest when it stopped, must
    // have been handed to the cluster's processor (freed now) to run.
    release.store(true, std::memory_order_release);
    u.join();
    CHECK(u_ran.load());
    t.join();
    p0.busy.join();
}

TEST_CASE("lending: the OS thread's exception state survives the threads it ran") {
    troupe_test::watchdog w{"lending: exception state"};
    troupe::cluster c{1};
    occupied p0{c};
    std::atomic<bool>& release = p0.release;
    troupe::future<int> f;
    troupe::thread t{c, [&] {
                         try {
                             throw std::runtime_error("inside a lent thread");
                         } catch (const std::runtime_error&) {
                             release.store(true, std::memory_order_release);
                             f.fulfil(7);
                         }
                     }};
    troupe::lend_while_blocked lend{c};
    try {
        throw 42;
    } catch (int) {
        CHECK(f.get() == 7);  // blocks (and lends) inside our handler
        CHECK(std::current_exception() != nullptr);
        try {
            throw;
        } catch (int v) {
            CHECK(v == 42);
        }
    }
    CHECK(std::uncaught_exceptions() == 0);
    t.join();
    p0.busy.join();
}

TEST_CASE("lending: OS-thread consumers lending to their producers lose nothing") {
    constexpr int items = troupe_test::scaled(20'000);
    // Around the clusters: a cluster keeps the guest processor each lending
    // OS thread used until it is destroyed (docs/scheduler.md).
    troupe_test::leak_check no_leaks;
    on_processors([](troupe::cluster& c) {
        troupe::semaphore full{0}, empty{64};
        std::atomic<long> produced{0};
        long consumed = 0;
        std::vector<troupe::thread> producers;
        for (int p = 0; p < 3; ++p)
            producers.emplace_back(c, [&] {
                for (int i = 0; i < items; ++i) {
                    empty.acquire();
                    produced.fetch_add(1, std::memory_order_relaxed);
                    full.release();
                }
            });
        std::vector<std::thread> consumers;
        std::atomic<long> total{0};
        for (int k = 0; k < 2; ++k)
            consumers.emplace_back([&] {
                troupe::lend_while_blocked lend{c};
                long mine = 0;
                for (int i = 0; i < 3 * items / 2; ++i) {
                    full.acquire();
                    ++mine;
                    empty.release();
                }
                total += mine;
            });
        for (auto& t : consumers) t.join();
        consumed = total.load();
        for (auto& p : producers) p.join();
        CHECK(consumed == 3L * items);
        CHECK(produced.load() == 3L * items);
    });
}
