// The dump names what a thread blocked on the everyday kit waits on:
// wait_group, latch, barrier (with their counts), a stop-token wait, a
// cancellable join.
#include <atomic>
#include <string>

#include "dump_text.hpp"
#include "fixture.hpp"
#include "troupe/barrier.hpp"
#include "troupe/future.hpp"
#include "troupe/latch.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"
#include "troupe/wait_group.hpp"

using troupe_test::has;
using troupe_test::wait_for_line;

namespace {
troupe::thread_attributes named(troupe::cluster& c, const char* name) {
    troupe::thread_attributes a;
    a.on = &c;
    a.name = name;
    return a;
}
}  // namespace

TEST_CASE("the dump shows waits on wait_group, latch, barrier and stop-token calls") {
    troupe::cluster c{2};
    troupe::wait_group wg{2, "jobs"};
    troupe::latch l{3, "ready"};
    troupe::barrier b{2, troupe::noop_completion{}, "step"};
    troupe::stop_source stop;
    troupe::future<void> never;
    troupe::thread g{named(c, "group-waiter"), [&] { wg.wait(); }};
    troupe::thread lw{named(c, "latch-waiter"), [&] { l.wait(); }};
    troupe::thread bw{named(c, "barrier-waiter"), [&] { b.arrive_and_wait(); }};
    troupe::thread fw{named(c, "future-waiter"), [&] {
                          try {
                              never.get(stop.get_token());
                          } catch (const troupe::cancelled&) {}
                      }};
    troupe::thread blocked{named(c, "blocked"), [&] { never.get(); }};
    troupe::thread jw{named(c, "joiner"), [&] {
                          try {
                              blocked.join(stop.get_token());
                          } catch (const troupe::cancelled&) {}
                      }};

    std::string s = wait_for_line("group-waiter", "waiting for");
    CHECK(has(s, "on wait_group 'jobs'"));
    CHECK(has(s, "count 2, 1 waiting"));
    s = wait_for_line("latch-waiter", "waiting for");
    CHECK(has(s, "on latch 'ready'"));
    CHECK(has(s, "count 3"));
    s = wait_for_line("barrier-waiter", "waiting for");
    CHECK(has(s, "on barrier 'step'"));
    CHECK(has(s, "phase 0, 1 of 2 arrived, 1 waiting"));
    s = wait_for_line("future-waiter", "waiting for");
    CHECK(has(s, "on future"));
    s = wait_for_line("joiner", "waiting for");
    CHECK(has(s, "on thread join"));

    stop.request_stop();
    fw.join();
    jw.join();
    wg.done();
    wg.done();
    l.count_down(3);
    b.arrive_and_wait();
    never.fulfil();
    g.join();
    lw.join();
    bw.join();
    blocked.join();
}
