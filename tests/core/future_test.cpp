// future<T>: fulfil once, get blocks, exceptions, reset and reuse.
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/future.hpp"
#include "troupe/thread.hpp"

using troupe_test::on_processors;

constexpr int rounds = troupe_test::scaled(3'000);

TEST_CASE("get blocks until fulfil; every waiter sees the value") {
    on_processors([](troupe::cluster& c) {
        troupe::future<std::string> f;
        std::atomic<int> ok{0};
        {
            std::vector<troupe::thread> ts;
            std::vector<std::thread> os;
            for (int i = 0; i < 10; ++i) ts.emplace_back(c, [&] { ok += f.get() == "ready"; });
            for (int i = 0; i < 2; ++i) os.emplace_back([&] { ok += f.get() == "ready"; });
            CHECK_FALSE(f.available());
            troupe::thread producer{c, [&] { f.fulfil("ready"); }};
            producer.join();
            for (auto& t : os) t.join();
        }
        CHECK(ok.load() == 12);
        CHECK(f.available());
        REQUIRE(f.try_get() != nullptr);
        CHECK(*f.try_get() == "ready");
    });
}

TEST_CASE("a second fulfil throws future_error and keeps the first value") {
    troupe::future<int> f;
    CHECK_FALSE(f.fulfil(1));  // nobody waited
    CHECK_THROWS_AS(f.fulfil(2), troupe::future_error);
    CHECK(f.get() == 1);
    troupe::future<void> v;
    v.fulfil();
    CHECK_THROWS_AS(v.fulfil(), troupe::future_error);
}

TEST_CASE("an exception delivered instead of a value is rethrown by every get") {
    on_processors([](troupe::cluster& c) {
        troupe::future<int> f;
        std::atomic<int> caught{0};
        {
            std::vector<troupe::thread> ts;
            for (int i = 0; i < 5; ++i)
                ts.emplace_back(c, [&] {
                    try {
                        f.get();
                    } catch (const std::runtime_error& e) {
                        caught += std::string(e.what()) == "no answer";
                    }
                });
            f.fulfil_exception(std::make_exception_ptr(std::runtime_error("no answer")));
        }
        CHECK(caught.load() == 5);
        CHECK_THROWS_AS(f.try_get(), std::runtime_error);
        CHECK_THROWS_AS(f.fulfil(3), troupe::future_error);
    });
}

TEST_CASE("reset makes a future reusable over many rounds (user and OS threads)") {
    on_processors([](troupe::cluster& c) {
        troupe::future<int> request, reply;
        long sum = 0;
        troupe::thread server{
            c, [&] {
                for (int i = 0; i < rounds; ++i) {
                    int v = request.get();
                    request.reset();  // before replying: the client waits on reply
                    reply.fulfil(v * 2);
                }
            }};
        for (int i = 0; i < rounds; ++i) {
            request.fulfil(i);
            sum += reply.get();
            reply.reset();
        }
        server.join();
        CHECK(sum == 2L * rounds * (rounds - 1) / 2);
    });
}

TEST_CASE("reset with a blocked waiter throws future_error") {
    troupe::cluster c{1};
    troupe::future<int> f;
    troupe::thread waiter{c, [&] { CHECK(f.get() == 5); }};
    while (f.waiters() == 0) std::this_thread::yield();
    CHECK_THROWS_AS(f.reset(), troupe::future_error);
    CHECK(f.fulfil(5));
    waiter.join();
    f.reset();
    CHECK_FALSE(f.available());
}

TEST_CASE("a future may be destroyed as soon as get() returns, while fulfil is still returning") {
    // The waiter sees the value without the future's lock (available() is a
    // plain load) and frees the future at once; the fulfiller is then still
    // inside fulfil. A fresh object at the same address must not be written
    // by that fulfil (ASan: use after free; TSan: race with its construction).
    constexpr int n = rounds;
    std::atomic<troupe::future<int>*> slot{nullptr};
    std::atomic<int> fulfilled{0};
    std::thread fulfiller{[&] {
        for (int i = 0; i < n; ++i) {
            troupe::future<int>* f;
            while (!(f = slot.exchange(nullptr, std::memory_order_acq_rel)))
                std::this_thread::yield();
            f->fulfil(i);
            fulfilled.fetch_add(1, std::memory_order_relaxed);
        }
    }};
    long sum = 0;
    for (int i = 0; i < n; ++i) {
        auto* f = new troupe::future<int>;
        slot.store(f, std::memory_order_release);
        while (!f->available()) std::this_thread::yield();
        sum += f->get();
        delete f;  // at once: fulfil may still be unlocking
    }
    fulfiller.join();
    CHECK(fulfilled.load() == n);
    CHECK(sum == long(n) * (n - 1) / 2);
}

TEST_CASE("future word transitions: fulfil racing waiters that are queueing") {
    // Each round, waiters from user and OS threads race the fulfil: each sees
    // the value exactly once, whether it queued or found it ready.
    on_processors([](troupe::cluster& c) {
        for (int round = 0; round < rounds / 3; ++round) {
            troupe::future<int> f;
            std::atomic<int> seen{0};
            {
                std::vector<troupe::thread> ts;
                for (int i = 0; i < 3; ++i)
                    ts.emplace_back(c, [&] { seen.fetch_add(f.get() == round ? 1 : 100); });
                std::thread os{[&] { seen.fetch_add(f.get() == round ? 1 : 100); }};
                f.fulfil(round);
                os.join();
            }
            CHECK(seen.load() == 4);
            CHECK(f.waiters() == 0);
            CHECK(f.available());
        }
    });
}
