// Exceptions across modules, at 1, 2 and 4 processors. After each one the
// program state is exactly what docs/exception-safety.md promises, and the
// program goes on and shuts down cleanly:
//  - a user thread, and an actor behaviour, blocked inserting into a channel
//    that main closes: channel_closed_with<T> hands the element back, the
//    buffered elements still drain (insert is strong); escaping a request's
//    behaviour, the exception reaches the asker's future and the actor keeps
//    running; escaping an ordinary behaviour, the system's handler sees it;
//  - a TROUPE_MUTEX body that throws while other threads wait for its
//    locks: both locks are released, every waiter gets them in turn;
//  - a waituntil clause body that throws: the winning operation happened,
//    no clause stays queued (pure-or); with `&`, completed operations'
//    bodies still run and the first exception propagates.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/actors.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/channel.hpp"
#include "troupe/mutex.hpp"
#include "troupe/thread.hpp"
#include "troupe/waituntil.hpp"

using troupe::channel;
using troupe_test::leak_check;
using troupe_test::on_processors;
using troupe_test::wait_until;

namespace {

using boxed = std::unique_ptr<int>;  // a heap element: a lost one is a leak

// Inserts 0, 1, 2, ... into `ch` until it is closed, counting the inserts;
// returns the element channel_closed_with handed back.
int fill_until_closed(channel<boxed>& ch, int& inserted) {
    try {
        for (int k = 0;; ++k) {
            ch << std::make_unique<int>(k);
            ++inserted;
        }
    } catch (troupe::channel_closed_with<boxed>& e) {
        return *e.value();
    }
}

struct feed : troupe::message {
    feed() : troupe::message(troupe::Delete) {}
};
struct feed_until_closed : troupe::request<int> {};
struct report : troupe::request<std::pair<int, int>> {};

// Inserts 0, 1, 2, ... into `out` until it is closed.
struct feeder : troupe::actor {
    feeder(troupe::actor_system& s, channel<boxed>& out) : troupe::actor(s), out(out) {}
    channel<boxed>& out;
    int inserted = 0;
    int returned = -1;  // the element channel_closed_with handed back
    // Catches the close itself.
    troupe::allocation receive(feed&) {
        returned = fill_until_closed(out, inserted);
        return troupe::Nodelete;
    }
    // Lets the close escape: the requester's future gets it.
    troupe::allocation receive(feed_until_closed&) {
        for (int k = 0;; ++k) out << std::make_unique<int>(k);
    }
    troupe::allocation receive(report& q) {
        q.reply(std::pair{inserted, returned});
        return troupe::Nodelete;
    }
};

// Escapes an ordinary behaviour: the system's handler decides.
struct thrower : troupe::actor {
    explicit thrower(troupe::actor_system& s) : troupe::actor(s) {}
    int received = 0;
    troupe::allocation receive(feed&) {
        ++received;
        throw std::runtime_error("thrower: refused");
    }
    troupe::allocation receive(report& q) {
        q.reply(std::pair{received, 0});
        return troupe::Nodelete;
    }
};

std::vector<int> drain(channel<boxed>& ch) {
    std::vector<int> got;
    for (boxed& b : ch) got.push_back(*b);  // ends when closed and drained
    return got;
}

const std::vector<int> first_four{0, 1, 2, 3};

}  // namespace

TEST_CASE("a user thread blocked inserting into a channel that closes gets its element back") {
    on_processors([](troupe::cluster& c) {
        leak_check no_leaks;
        channel<boxed> ch{4, "work"};
        int inserted = 0, returned = -1;
        troupe::thread producer{c, [&] { returned = fill_until_closed(ch, inserted); }};
        wait_until([&] { return ch.waiting_producers() == 1; });
        ch.close();
        producer.join();
        CHECK(inserted == 4);
        CHECK(returned == 4);
        CHECK(drain(ch) == first_four);
        CHECK_THROWS_AS(ch.remove(), troupe::channel_closed);
        CHECK_THROWS_AS(ch << std::make_unique<int>(9), troupe::channel_closed_with<boxed>);
    });
}

TEST_CASE("a behaviour blocked inserting into a closing channel: caught, or sent to the asker") {
    on_processors([](troupe::cluster& c) {
        leak_check no_leaks;
        troupe::actor_system sys{2};
        channel<boxed> first{4, "first"}, second{4, "second"};
        feeder f{sys, first};
        troupe::send<feed>(f);
        wait_until([&] { return first.waiting_producers() == 1; });
        first.close();
        report r;
        CHECK(troupe::ask(f, r).get() == std::pair{4, 4});
        CHECK(drain(first) == first_four);

        first.close();  // closing twice is harmless
        CHECK(first.is_closed());

        // Another feeder, on a channel whose close escapes the behaviour of
        // a request: a user thread asks and waits; main closes.
        feeder g{sys, second};
        std::exception_ptr seen;
        troupe::thread asker{c, [&] {
                                 feed_until_closed q;
                                 try {
                                     troupe::ask(g, q).get();
                                 } catch (...) {
                                     seen = std::current_exception();
                                 }
                             }};
        wait_until([&] { return second.waiting_producers() == 1; });
        second.close();
        asker.join();
        // g keeps running; and its answer orders the end of the throwing
        // behaviour (the worker's release of the exception, in libstdc++,
        // which TSan cannot see) before main touches the exception below.
        report r2;
        CHECK(troupe::ask(g, r2).get() == std::pair{0, -1});
        REQUIRE(seen);
        CHECK_THROWS_AS(std::rethrow_exception(seen), troupe::channel_closed_with<boxed>);
        seen = nullptr;  // holds the element: free it inside the leak check
        CHECK(drain(second) == first_four);
        f | troupe::finished_msg;
        g | troupe::finished_msg;
        sys.stop();
    });
}

TEST_CASE("an exception escaping an ordinary behaviour goes to the system's handler") {
    on_processors([](troupe::cluster&) {
        leak_check no_leaks;
        static std::mutex m;
        static std::vector<std::string> seen;
        troupe::actor_system_config cfg;
        cfg.workers = 2;
        cfg.on_behaviour_exception = [](const troupe::behaviour_exception& e) {
            std::lock_guard g{m};
            seen.push_back(e.message_type + ": " + e.what);
            return troupe::Nodelete;  // keep the actor running
        };
        {
            troupe::actor_system sys{cfg};
            thrower t{sys};
            for (int i = 0; i < 3; ++i) troupe::send<feed>(t);
            report r;
            CHECK(troupe::ask(t, r).get().first == 3);  // every message received
            t | troupe::finished_msg;
            sys.stop();
        }
        std::lock_guard g{m};
        REQUIRE(seen.size() == 3);
        for (const auto& s : seen) CHECK(s.find("thrower: refused") != std::string::npos);
        std::vector<std::string>{}.swap(seen);
    });
}

TEST_CASE("a TROUPE_MUTEX body that throws while other threads wait releases both locks") {
    on_processors([](troupe::cluster& c) {
        leak_check no_leaks;
        troupe::blocking_lock a{"a"}, b{"b"};
        constexpr int waiting = 4;
        long in_scope = 0;  // guarded by a and b
        std::vector<troupe::thread> waiters;
        bool thrown = false;
        try {
            TROUPE_MUTEX(a, b) {
                for (int k = 0; k < waiting; ++k)
                    waiters.emplace_back(c, [&, k] {
                        // Half name the locks in the other order.
                        if (k % 2) {
                            TROUPE_MUTEX(b, a) { ++in_scope; }
                        } else {
                            TROUPE_MUTEX(a, b) { ++in_scope; }
                        }
                    });
                // Every waiter is queued on the first lock (by address).
                troupe::blocking_lock& first = std::less<>{}(&a, &b) ? a : b;
                wait_until([&] { return first.waiters() == std::size_t{waiting}; });
                throw std::runtime_error("body failed");
            }
        } catch (const std::runtime_error&) {
            thrown = true;
        }
        for (auto& t : waiters) t.join();
        CHECK(thrown);
        CHECK(in_scope == waiting);
        CHECK(a.try_lock());
        CHECK(b.try_lock());
        a.unlock();
        b.unlock();

        // Many rounds, each thread throwing from every third scope.
        std::atomic<int> caught{0};
        const int rounds = troupe_test::scaled(300, 5);
        std::vector<troupe::thread> ts;
        for (int k = 0; k < 4; ++k)
            ts.emplace_back(c, [&, k] {
                for (int i = 0; i < rounds; ++i) {
                    try {
                        TROUPE_MUTEX(k % 2 ? b : a, k % 2 ? a : b) {
                            ++in_scope;
                            if (i % 3 == 0) throw std::runtime_error("round failed");
                        }
                    } catch (const std::runtime_error&) {
                        caught.fetch_add(1);
                    }
                }
            });
        for (auto& t : ts) t.join();
        CHECK(in_scope == waiting + 4L * rounds);
        CHECK(caught.load() == 4 * ((rounds + 2) / 3));
        CHECK(a.waiters() == 0);
        CHECK(b.waiters() == 0);
    });
}

TEST_CASE("a waituntil body that throws: the operation happened, nothing stays queued") {
    on_processors([](troupe::cluster& c) {
        leak_check no_leaks;
        channel<boxed> x{2, "x"}, y{2, "y"};
        // Pure-or: a user thread waits on both; y's element arrives and its
        // body throws.
        boxed vx, vy;
        bool thrown = false;
        troupe::thread waiter{c, [&] {
                                  try {
                                      troupe::waituntil(troupe::on(x.remove_into(vx), [] {}) |
                                                        troupe::on(y.remove_into(vy), [] {
                                                            throw std::runtime_error("y's body");
                                                        }));
                                  } catch (const std::runtime_error&) {
                                      thrown = true;
                                  }
                              }};
        wait_until([&] { return x.waiting_consumers() == 1 && y.waiting_consumers() == 1; });
        y << std::make_unique<int>(7);
        waiter.join();
        CHECK(thrown);
        REQUIRE(vy);
        CHECK(*vy == 7);  // the winning operation happened
        CHECK(!vx);
        CHECK(x.waiting_consumers() == 0);  // and no clause stayed queued
        CHECK(y.waiting_consumers() == 0);
        x << std::make_unique<int>(8);  // a later element is not taken by a stale clause
        CHECK(x.size() == 1);
        CHECK(*x.remove() == 8);

        // With `&`: both operations complete (both channels hold an element);
        // x's body (written second) throws, y's body runs whether it runs
        // before x's or during the cleanup, the exception propagates.
        x << std::make_unique<int>(1);
        y << std::make_unique<int>(2);
        vx.reset();
        vy.reset();
        bool y_body = false;
        thrown = false;
        troupe_test::run_in(c, [&] {
            try {
                troupe::waituntil(
                    troupe::on(y.remove_into(vy), [&] { y_body = true; }) &
                    troupe::on(x.remove_into(vx), [] { throw std::runtime_error("x's body"); }));
            } catch (const std::runtime_error& e) {
                thrown = std::string{e.what()} == "x's body";
            }
        });
        CHECK(thrown);
        CHECK(y_body);
        REQUIRE(vx);
        REQUIRE(vy);
        CHECK(*vx == 1);
        CHECK(*vy == 2);
        CHECK(x.size() == 0);
        CHECK(y.size() == 0);

        // The program goes on: the channels still carry elements, through
        // two user threads to main.
        troupe::thread source{c, [&] {
                                  for (int i = 0; i < 10; ++i) x << std::make_unique<int>(i);
                                  x.close();
                              }};
        troupe::thread echo{c, [&] {
                                for (boxed& b : x) y << std::move(b);
                                y.close();
                            }};
        int expect = 0;
        for (boxed& b : y) CHECK(*b == expect++);
        source.join();
        echo.join();
        CHECK(expect == 10);
    });
}
