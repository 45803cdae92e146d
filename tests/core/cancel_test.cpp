// Blocking calls given a stop_token: future get, lock, thread join. A stop
// racing completion: exactly one of the two happens.
#include <atomic>
#include <thread>

#include "fixture.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/future.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;
using troupe_test::scaled;

TEST_CASE("future get(token): cancelled leaves the future as it was; racing fulfil") {
    on_processors([](troupe::cluster& c) {
        int got = 0, cancelled = 0;
        for (int i = 0; i < scaled(500); ++i) {
            troupe::future<int> f;
            troupe::stop_source stop;
            troupe::thread fulfiller{c, [&] { f.fulfil(7); }};
            troupe::thread stopper{c, [&] { stop.request_stop(); }};
            try {
                const int v = f.get(stop.get_token());
                CHECK(v == 7);
                ++got;
            } catch (const troupe::cancelled& e) {
                CHECK(std::string(e.what()).find("future") != std::string::npos);
                ++cancelled;
            }
            fulfiller.join();
            stopper.join();
            CHECK(f.waiters() == 0);
            CHECK(f.get() == 7);
        }
        CHECK(got + cancelled == scaled(500));
    });
}

TEST_CASE("lock(token): a cancelled waiter holds nothing and leaves the queue") {
    on_processors([](troupe::cluster& c) {
        troupe::blocking_lock l{"res"};
        troupe::stop_source stop;
        l.lock();
        std::atomic<bool> cancelled{false};
        troupe::thread w{
            c, [&] {
                try {
                    l.lock(stop.get_token());
                    l.unlock();
                } catch (const troupe::cancelled& e) {
                    CHECK(std::string(e.what()).find("blocking_lock 'res'") != std::string::npos);
                    cancelled = true;
                }
            }};
        troupe_test::wait_until([&] { return l.waiters() == 1; });
        stop.request_stop();
        w.join();
        CHECK(cancelled.load());
        CHECK(l.waiters() == 0);
        CHECK(l.owned_by_caller());
        l.unlock();
        CHECK(l.try_lock());  // free: the cancelled waiter took nothing
        l.unlock();
    });
}

TEST_CASE("lock(token) racing unlock: the waiter owns the lock exactly when it returns") {
    on_processors([](troupe::cluster& c) {
        troupe::blocking_lock l;
        int owned = 0, cancelled = 0;
        for (int i = 0; i < scaled(500); ++i) {
            troupe::stop_source stop;
            std::atomic<bool> locked{false};
            l.lock();
            troupe::thread w{c, [&] {
                                 try {
                                     l.lock(stop.get_token());
                                     ++owned;
                                     l.unlock();
                                 } catch (const troupe::cancelled&) {
                                     ++cancelled;
                                 }
                             }};
            troupe::thread stopper{c, [&] { stop.request_stop(); }};
            troupe::this_thread::yield();
            l.unlock();
            w.join();
            stopper.join();
            CHECK(l.try_lock());  // never left held by a cancelled waiter
            l.unlock();
            (void)locked;
        }
        CHECK(owned + cancelled == scaled(500));
    });
}

TEST_CASE("join(token): cancelled keeps the thread joinable; racing the thread's end") {
    on_processors([](troupe::cluster& c) {
        int joined = 0, cancelled = 0;
        for (int i = 0; i < scaled(500); ++i) {
            troupe::stop_source stop;
            std::atomic<int> ran{0};
            troupe::thread t{c, [&] { ran = 1; }};
            troupe::thread stopper{c, [&] { stop.request_stop(); }};
            try {
                t.join(stop.get_token());
                ++joined;
                CHECK_FALSE(t.joinable());
                CHECK(ran.load() == 1);
            } catch (const troupe::cancelled&) {
                ++cancelled;
                CHECK(t.joinable());
                t.join();
            }
            stopper.join();
        }
        CHECK(joined + cancelled == scaled(500));
    });
}

TEST_CASE("join(token): a stop wakes a joiner of a blocked thread; the exception survives") {
    on_processors([](troupe::cluster& c) {
        troupe::future<void> go;
        troupe::stop_source stop;
        troupe::thread t{c, [&] {
                             go.get();
                             throw std::runtime_error("late");
                         }};
        std::thread os{[&] {
            while (!go.waiters()) std::this_thread::yield();
            stop.request_stop();
        }};
        CHECK_THROWS_AS(t.join(stop.get_token()), troupe::cancelled);
        os.join();
        CHECK(t.joinable());
        go.fulfil();
        CHECK_THROWS_WITH_AS(t.join(), "late", std::runtime_error);
    });
}
