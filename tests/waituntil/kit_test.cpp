// waituntil over the everyday kit: wait_group, latch, a barrier phase, a
// stop token, timer channels (after, ticker), in or and and shapes.
#include <atomic>
#include <chrono>
#include <vector>

#include "fixture.hpp"
#include "troupe/barrier.hpp"
#include "troupe/channel.hpp"
#include "troupe/latch.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"
#include "troupe/timer_channel.hpp"
#include "troupe/wait_group.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
using troupe::on;
using troupe::waituntil;
using troupe::when;
using troupe_test::on_processors;
using troupe_test::run_in;

TEST_CASE("on(wait_group) | on(token): the group wins when the tasks finish") {
    on_processors([](troupe::cluster& c) {
        for (int i = 0; i < troupe_test::scaled(200); ++i) {
            troupe::wait_group wg{3};
            troupe::stop_source stop;
            std::vector<troupe::thread> ts;
            for (int k = 0; k < 3; ++k) ts.emplace_back(c, [&] { wg.done(); });
            int which = -1;
            auto r =
                waituntil(on(wg, [&] { which = 0; }) | on(stop.get_token(), [&] { which = 1; }));
            CHECK(which == 0);
            CHECK(r.index() == 0);
            CHECK(wg.count() == 0);
            ts.clear();
            CHECK(wg.waiters() == 0);
        }
    });
}

TEST_CASE("on(token) wins over a latch that never opens; the latch keeps no waiter") {
    on_processors([](troupe::cluster& c) {
        troupe::latch l{1};
        troupe::stop_source stop;
        troupe::thread stopper{c, [&] {
                                   troupe_test::wait_until([&] { return l.waiters() == 1; });
                                   stop.request_stop();
                               }};
        bool stopped = false;
        run_in(c, [&] {
            waituntil(on(l, [] { FAIL("the latch never opens"); }) |
                      on(stop.get_token(), [&] { stopped = true; }));
        });
        stopper.join();
        CHECK(stopped);
        CHECK(l.waiters() == 0);
    });
}

TEST_CASE("latch & wait_group: both bodies run once both are open") {
    on_processors([](troupe::cluster& c) {
        troupe::latch l{2};
        troupe::wait_group wg{1};
        troupe::thread a{c, [&] {
                             l.count_down();
                             wg.done();
                             l.count_down();
                         }};
        int ran = 0;
        waituntil(on(l, [&] { ++ran; }) & on(wg, [&] { ++ran; }));
        a.join();
        CHECK(ran == 2);
    });
}

TEST_CASE("on(barrier.phase_done(t)): selected once the phase completes") {
    on_processors([](troupe::cluster& c) {
        troupe::barrier b{2};
        auto tok = b.arrive();
        troupe::thread other{c, [&] { b.arrive_and_wait(); }};
        bool done = false;
        auto r = waituntil(on(b.phase_done(tok), [&] { done = true; }) |
                           on(troupe::timeout(1h), [] { FAIL("no timeout expected"); }));
        other.join();
        CHECK(done);
        CHECK(r.index() == 0);
        CHECK(b.phase() == 1);
    });
}

TEST_CASE("after(d) as a select timeout, and a ticker in a select loop") {
    on_processors([](troupe::cluster& c) {
        run_in(c, [] {
            troupe::channel<int> never{1};
            int v = 0;
            bool timed_out = false;
            waituntil(on(never.remove_into(v), [] { FAIL("nothing is sent"); }) |
                      on(troupe::after(2ms).remove_discard(), [&] { timed_out = true; }));
            CHECK(timed_out);

            troupe::ticker tick{1ms};
            troupe::timer deadline{1h};
            int ticks = 0;
            troupe::timer_clock::time_point when;
            while (ticks < 3)
                waituntil(on(tick.remove_into(when), [&] { ++ticks; }) |
                          on(deadline.remove_discard(), [] { FAIL("deadline"); }));
            tick.stop();
            bool ok = true;
            waituntil(on(tick.remove_into(when, ok), [&] {}));  // closed: ok false
            CHECK_FALSE(ok);
            CHECK(deadline.stop());
        });
    });
}
