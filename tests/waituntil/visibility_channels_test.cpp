// A channel clause's body sees its operation done (the channel half of
// visibility_test.cpp): with report_close, a body told `closed` sees the
// channel closed, and a body told `ok` has the element in its variable,
// whether the waiter is a user thread or an OS thread and the producer runs
// on another processor.
#include <array>
#include <atomic>

#include "fixture.hpp"
#include "troupe/channel.hpp"
#include "troupe/thread.hpp"
#include "troupe/waituntil.hpp"

using troupe::channel;
using troupe::channel_status;
using troupe::on;
using troupe::waituntil;
using troupe::when;
using troupe_test::run_in;

namespace {
constexpr int rounds = troupe_test::scaled(200, 20);
}

TEST_CASE("report_close bodies see the channel closed and the element moved") {
    troupe_test::watchdog w{"channel bodies"};
    troupe::cluster c{2};
    auto run = [&](auto&& waiter) {
        int bad_close = 0, bad_value = 0, closes = 0, values = 0;
        for (int r = 0; r < rounds; ++r) {
            std::array<channel<int>, 3> chans;
            // One element each (rendezvous: handed straight to the waiter),
            // then the closes, in an order the waiter does not expect.
            troupe::thread producer{c, [&] {
                                        for (int i : {1, 0, 2}) chans[std::size_t(i)] << i + 10;
                                        for (int i : {1, 0, 2}) chans[std::size_t(i)].close();
                                    }};
            waiter([&] {
                std::array<bool, 3> open{true, true, true};
                std::array<int, 3> v{-1, -1, -1};
                auto body = [&](std::size_t i) {
                    return [&, i](channel_status s) {
                        if (s == channel_status::closed) {
                            ++closes;
                            open[i] = false;
                            if (!chans[i].is_closed()) ++bad_close;
                        } else {
                            ++values;
                            if (v[i] != int(i) + 10) ++bad_value;
                            v[i] = -1;
                        }
                    };
                };
                while (open[0] || open[1] || open[2])
                    waituntil(when(open[0],
                                   on(chans[0].remove_into(v[0], troupe::report_close), body(0))) &
                              when(open[1],
                                   on(chans[1].remove_into(v[1], troupe::report_close), body(1))) &
                              when(open[2],
                                   on(chans[2].remove_into(v[2], troupe::report_close), body(2))));
            });
            producer.join();
        }
        CHECK(closes == 3 * rounds);
        CHECK(values == 3 * rounds);
        CHECK(bad_close == 0);
        CHECK(bad_value == 0);
    };
    run([&](auto&& f) { run_in(c, f); });
    run([](auto&& f) { f(); });
}
