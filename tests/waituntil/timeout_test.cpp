// Timeouts as clauses (Cforall's waituntil/timeout): alone, with or, with
// and, several at once, racing otherwise, and as the way out of a statement
// whose other clauses never become ready.
#include <atomic>
#include <chrono>
#include <string>

#include "fixture.hpp"
#include "troupe/future.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
using troupe::on;
using troupe::otherwise;
using troupe::timeout;
using troupe::waituntil;
using troupe_test::on_processors;
using troupe_test::run_in;

TEST_CASE("timeout sequence (Cforall timeout test)") {
    on_processors(
        [](troupe::cluster& c) {
            run_in(c, [&] {
                std::string out;
                auto say = [&](const char* s) { return [&out, s] { out += s; }; };
                waituntil(on(timeout(1ms), say("timeout ")));
                waituntil(on(timeout(1ms), say("timeout ")) | on(timeout(1h), say("late ")));
                waituntil(on(timeout(100s), say("timeout ")), otherwise(say("else ")));
                waituntil(on(timeout(1ns), say("timeout ")) & on(timeout(2ms), say("timeout ")));
                int total = 0;
                for (int i = 0; i < 1000; ++i)
                    waituntil(on(timeout(1ns), [&] { ++total; }), otherwise([&] { ++total; }));
                CHECK(total == 1000);
                CHECK(out == "timeout timeout else timeout timeout ");
            });
        },
        {1, 2});
}

TEST_CASE("several timeouts: the shortest wins an or, all run under and") {
    troupe::future<int> never;
    auto r = waituntil(on(never) | on(timeout(1h)) | on(timeout(2ms)) | on(timeout(30min)));
    CHECK(r.index() == 2);
    auto r2 = waituntil(on(timeout(1ms)) & on(timeout(3ms)) & on(timeout(2ms)));
    CHECK(r2.count() == 3);
    // (c1 & 1ms) | (c2 & 3ms) from the thesis: with only the second group's
    // channel-like clause ready, both timeouts' bodies run.
    troupe::future<int> ready;
    ready.fulfil(1);
    auto r3 = waituntil((on(never) & on(timeout(1ms))) | (on(ready) & on(timeout(3ms))));
    CHECK(r3.ran(1));
    CHECK(r3.ran(2));
    CHECK(r3.ran(3));
    CHECK_FALSE(r3.ran(0));
    CHECK(never.waiters() == 0);
}

TEST_CASE("a timeout given as an lvalue, and a zero timeout, are ready clauses") {
    troupe::future<int> never;
    timeout t{1ms};
    CHECK(waituntil(on(never) | on(t)).index() == 1);
    CHECK(waituntil(on(never) | on(timeout(0ns))).index() == 1);
    // Zero timeout against otherwise: the timeout is ready at registration.
    CHECK(waituntil(on(timeout(0ns)), otherwise([] {})).index() == 0);
}

TEST_CASE("timeout racing a fulfilment: exactly one of them wins each time") {
    on_processors(
        [](troupe::cluster& c) {
            int by_future = 0, by_timeout = 0;
            constexpr int rounds = troupe_test::scaled(1'000);
            for (int i = 0; i < rounds; ++i) {
                troupe::future<int> f;
                troupe::thread t{c, [&] { f.fulfil(i); }};
                run_in(c, [&] {
                    auto r = waituntil(
                        on(f, [&] { ++by_future; }) |
                        on(timeout(std::chrono::microseconds(i % 50)), [&] { ++by_timeout; }));
                    CHECK(r.count() == 1);
                });
                t.join();
            }
            CHECK(by_future + by_timeout == rounds);
        },
        {1, 2});
}
