// condition_variable with every lock kind; timed waits; morphing.
#include <atomic>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "fixture.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/condition_variable.hpp"
#include "troupe/mcs_lock.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"

using namespace std::chrono_literals;
using troupe_test::on_processors;
using troupe_test::run_in;

constexpr int items = troupe_test::scaled(20'000);

namespace {
// A bounded buffer of capacity 4 with two condition variables; producers
// and consumers are a mix of user threads and OS threads. Every item is
// consumed exactly once.
template <class Lock>
void bounded_buffer(troupe::cluster& c) {
    // Spin locks under oversubscription are slow by nature (see locks_test).
    const int items = std::is_base_of_v<troupe::detail::blocking_lock_base, Lock> ||
                              std::is_same_v<Lock, std::mutex>
                          ? ::items
                          : ::items / 40;
    Lock l;
    troupe::condition_variable not_full, not_empty;
    std::vector<int> buf;
    std::atomic<long> consumed_sum{0};
    std::atomic<int> consumed{0};
    constexpr int producers = 3;
    auto produce = [&, items](int id) {
        for (int i = 0; i < items; ++i) {
            std::lock_guard g{l};
            not_full.wait(l, [&] { return buf.size() < 4; });
            buf.push_back(id * items + i);
            not_empty.notify_one();
        }
    };
    auto consume = [&] {
        for (;;) {
            int v;
            {
                std::lock_guard g{l};
                not_empty.wait(l, [&] { return !buf.empty(); });
                v = buf.front();
                buf.erase(buf.begin());
                not_full.notify_one();
            }
            if (v < 0) return;  // poison
            consumed_sum += v;
            ++consumed;
        }
    };
    {
        std::vector<troupe::thread> ts;
        std::thread os_producer{produce, 0};
        std::thread os_consumer{consume};
        for (int p = 1; p < producers; ++p) ts.emplace_back(c, produce, p);
        for (int k = 0; k < 2; ++k) ts.emplace_back(c, consume);
        os_producer.join();
        for (int p = 1; p < producers; ++p) {
            ts.front().join();
            ts.erase(ts.begin());
        }
        for (int k = 0; k < 3; ++k) {  // one poison per consumer
            std::lock_guard g{l};
            not_full.wait(l, [&] { return buf.size() < 4; });
            buf.push_back(-1);
            not_empty.notify_one();
        }
        os_consumer.join();
    }
    const long n = long(producers) * items;
    CHECK(consumed.load() == n);
    CHECK(consumed_sum.load() == n * (n - 1) / 2);
}
}  // namespace

TEST_CASE_TEMPLATE("bounded buffer over a condition variable with each lock kind", Lock,
                   troupe::blocking_lock, troupe::owner_lock, troupe::spinlock, troupe::mcs_lock,
                   std::mutex) {
    on_processors([](troupe::cluster& c) { bounded_buffer<Lock>(c); });
}

TEST_CASE("notify_one wakes in FIFO order; notify_all wakes everyone") {
    on_processors([](troupe::cluster& c) {
        troupe::blocking_lock l;
        troupe::condition_variable cv;
        std::vector<int> order;
        int queued = 0;
        std::vector<troupe::thread> ts;
        for (int i = 0; i < 8; ++i) {
            ts.emplace_back(c, [&, i] {
                std::lock_guard g{l};
                ++queued;
                cv.wait(l);
                order.push_back(i);
            });
            for (;;) {  // start the next waiter only once this one waits
                std::lock_guard g{l};
                if (queued == i + 1 && !cv.empty()) break;
                l.unlock();
                troupe::this_thread::yield();
                l.lock();
            }
        }
        for (int i = 0; i < 4; ++i) CHECK(cv.notify_one());
        CHECK(cv.notify_all());
        ts.clear();
        CHECK_FALSE(cv.notify_one());
        CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    });
}

TEST_CASE("wait morphing restores the owner_lock recursion depth") {
    troupe::cluster c{2};
    troupe::owner_lock l;
    troupe::condition_variable cv;
    bool go = false;
    run_in(c, [&] {
        troupe::thread waiter{[&] {
            l.lock();
            l.lock();
            l.lock();
            cv.wait(l, [&] { return go; });
            CHECK(l.owned_by_caller());
            l.unlock();
            l.unlock();
            CHECK(l.owned_by_caller());  // one level still held
            l.unlock();
            CHECK_FALSE(l.owned_by_caller());
        }};
        for (;;) {
            l.lock();
            const bool waiting = !cv.empty();
            if (waiting) go = true;
            l.unlock();
            if (waiting) break;
            troupe::this_thread::yield();
        }
        cv.notify_one();
    });
}

TEST_CASE("a timed wait that nobody signals expires and returns false holding the lock") {
    on_processors(
        [](troupe::cluster& c) {
            troupe::blocking_lock l;
            troupe::condition_variable cv;
            run_in(c, [&] {
                std::lock_guard g{l};
                CHECK_FALSE(cv.wait_for(l, 2ms));
                CHECK(l.owned_by_caller());
                CHECK(cv.empty());  // the expired waiter left the queue
            });
            std::mutex m;
            std::unique_lock lk{m};
            CHECK_FALSE(cv.wait_for(m, 1ms));  // from an OS thread, std::mutex
            CHECK(lk.owns_lock());
        },
        {1, 2});
}

TEST_CASE("a timed wait woken before its deadline returns true") {
    on_processors([](troupe::cluster& c) {
        troupe::blocking_lock l;
        troupe::condition_variable cv;
        bool flag = false;
        bool result = false;
        troupe::thread waiter{c, [&] {
                                  std::lock_guard g{l};
                                  // An hour: only the notify can end this wait in a passing run.
                                  result =
                                      cv.wait_for(l, std::chrono::hours(1), [&] { return flag; });
                              }};
        for (;;) {
            std::lock_guard g{l};
            if (!cv.empty()) {
                flag = true;
                break;
            }
            l.unlock();
            troupe::this_thread::yield();
            l.lock();
        }
        cv.notify_one();
        waiter.join();
        CHECK(result);
    });
}

TEST_CASE("timeouts racing notifies: each waiter is either notified or timed out, never both") {
    on_processors(
        [](troupe::cluster& c) {
            troupe::blocking_lock l;
            troupe::condition_variable cv;
            std::atomic<int> notified{0}, expired{0};
            std::atomic<bool> stop{false};
            {
                std::vector<troupe::thread> ts;
                for (int i = 0; i < 8; ++i)
                    ts.emplace_back(c, [&] {
                        for (int k = 0; k < 200; ++k) {
                            std::lock_guard g{l};
                            if (cv.wait_for(l, std::chrono::microseconds(50 + k % 7 * 30)))
                                ++notified;
                            else ++expired;
                        }
                    });
                troupe::thread notifier{c, [&] {
                                            while (!stop.load()) {
                                                cv.notify_one();
                                                troupe::this_thread::yield();
                                            }
                                        }};
                for (int i = 0; i < 8; ++i) {
                    ts.back().join();
                    ts.pop_back();
                }
                stop = true;
            }
            CHECK(notified.load() + expired.load() == 8 * 200);
            CHECK(cv.empty());
        },
        {1, 2});
}
