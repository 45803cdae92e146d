// Actor timers: send_after / send_at / send_every and their cancel handles,
// from behaviours and other threads; the cancel race (once cancel() returns
// no delivery starts); cancelling from the timer's own delivery and twice;
// a timer whose actor has finished (dropped and counted, not a misuse);
// pending timers in the dump.
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "actor_fixture.hpp"
#include "dump_text.hpp"
#include "leak_check.hpp"

using namespace std::chrono_literals;
using troupe_test::on_workers;

namespace {

struct tick : troupe::message {
    int n = 0;
    tick() = default;
    explicit tick(int n) : n(n) {}
};
struct count_q : troupe::request<long> {};
struct start_every : troupe::message {};
struct die : troupe::message {};

long pending() { return static_cast<long>(troupe::detail::actor_timers_pending()); }

// Counts ticks; `stop_at` > 0: cancels its periodic timer from the
// delivery of that tick.
struct counter : troupe::actor {
    std::atomic<long> ticks{0};
    long sum = 0;
    long stop_at = 0;
    bool cancel_result = false;
    bool second_cancel = true;
    troupe::timer_handle beat;
    troupe::future<void> stopped;
    void receive(tick& t) {
        sum += t.n;
        const long n = ticks.fetch_add(1, std::memory_order_relaxed) + 1;
        if (stop_at != 0 && n == stop_at) {
            cancel_result = beat.cancel();  // from its own delivery
            second_cancel = beat.cancel();  // twice
            stopped.fulfil();
        }
    }
    void receive(start_every&) { beat = troupe::send_every<tick>(*this, 1ms, 1); }
    void receive(count_q& q) { q.reply(ticks.load()); }
    troupe::allocation receive(die&) { return troupe::Finished; }
};

// Cancels its one-shot timer from that timer's own delivery.
struct self_canceller : troupe::actor {
    troupe::timer_handle t;
    bool result = true;
    troupe::future<void> done;
    void receive(start_every&) { t = troupe::send_after<tick>(*this, 1ms, 1); }
    void receive(tick&) {
        result = t.cancel();  // its only delivery is under way: nothing to stop
        done.fulfil();
    }
    troupe::allocation receive(die&) { return troupe::Finished; }
};

// Quiet misuse handler that counts reports (a drop to a finished actor must
// not be one).
std::atomic<int> misuse_reports{0};

}  // namespace

TEST_CASE("send_after and send_at deliver once; a late cancel returns false") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        counter c;
        auto t1 = troupe::send_after<tick>(c, 1ms, 5);  // value form
        tick mine{7};
        auto t2 = troupe::send_at(c, std::chrono::steady_clock::now() + 2ms, mine);  // reference
        troupe_test::wait_until([&] { return pending() == 0; });
        count_q q;
        CHECK(troupe::ask(c, q).get() == 2);
        CHECK(c.sum == 12);
        CHECK_FALSE(t1.cancel());
        CHECK_FALSE(t2.cancel());
        CHECK_FALSE(t1.pending());
        die d;
        c | d;
        sys.stop();
    });
}

TEST_CASE("a cancelled timer never delivers; cancelling twice returns false") {
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{2};
    counter c;
    auto t = troupe::send_after<tick>(c, 1h, 1);
    CHECK(t.pending());
    CHECK(troupe_test::has(troupe_test::dump_now(), "actor timers pending (all systems): 1"));
    CHECK(t.cancel());
    CHECK_FALSE(t.cancel());
    CHECK_FALSE(t.pending());
    CHECK(pending() == 0);  // freed with the cancel (the handle still holds it)
    count_q q;
    CHECK(troupe::ask(c, q).get() == 0);
    die d;
    c | d;
    sys.stop();
}

TEST_CASE("a periodic timer started from a behaviour, cancelled from its own delivery") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        counter c;
        c.stop_at = 5;
        start_every s;
        c | s;
        c.stopped.get();
        troupe_test::wait_until([&] { return pending() == 0; });  // the flight ended
        count_q q;
        CHECK(troupe::ask(c, q).get() == 5);  // never a sixth
        CHECK(c.cancel_result);               // it stopped future ticks
        CHECK_FALSE(c.second_cancel);         // nothing left to stop
        die d;
        c | d;
        sys.stop();
    });
}

TEST_CASE("the cancel race: each one-shot is either delivered or cancelled, never both") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        counter c;
        const int n = troupe_test::scaled(3000, 10);
        std::vector<troupe::timer_handle> ts;
        ts.reserve(n);
        long cancelled = 0;
        for (int i = 0; i < n; ++i) {
            ts.push_back(troupe::send_after<tick>(c, std::chrono::microseconds{i % 50}, 1));
            if (i >= 10 && ts[i - 10].cancel()) ++cancelled;  // racing its firing
        }
        for (int i = n - 10; i < n; ++i)
            if (ts[i].cancel()) ++cancelled;
        troupe_test::wait_until([&] { return pending() == 0; });
        count_q q;
        CHECK(troupe::ask(c, q).get() == n - cancelled);
        die d;
        c | d;
        sys.stop();
    });
}

TEST_CASE("a timer whose actor has finished is dropped and counted, not reported") {
    troupe_test::leak_check no_leaks;
    misuse_reports = 0;
    auto old = troupe::set_misuse_handler([](std::string_view) { misuse_reports.fetch_add(1); });
    {
        troupe::actor_system sys{2};
        counter c;
        die d;
        c | d;
        troupe_test::wait_until([&] { return c.finished(); });
        auto t = troupe::send_after<tick>(c, 1ms, 1);
        tick mine{1};
        auto p = troupe::send_every(c, 1ms, mine);
        troupe_test::wait_until([&] { return pending() == 0; });
        CHECK(troupe_test::has(troupe_test::dump_now(),
                               "timer messages dropped (their actor had finished): 2"));
        CHECK_FALSE(p.cancel());
        sys.stop();
    }
    troupe::set_misuse_handler(old);
    CHECK(misuse_reports.load() == 0);
}

TEST_CASE("timers from another thread to many actors; a period <= 0 is refused") {
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{2};
    std::vector<counter> cs(8);
    std::vector<troupe::timer_handle> ts;
    for (int round = 0; round < 4; ++round)
        for (auto& c : cs) ts.push_back(troupe::send_after<tick>(c, 1ms, 1));
    troupe_test::wait_until([&] { return pending() == 0; });
    for (auto& c : cs) {
        count_q q;
        CHECK(troupe::ask(c, q).get() == 4);
    }
    CHECK_THROWS_AS(troupe::send_every<tick>(cs[0], 0ms, 1), std::invalid_argument);
    tick m;
    CHECK_THROWS_AS(troupe::send_every(cs[0], -1ms, m), std::invalid_argument);
    cs[0] | m;  // sent after all (checked builds report a message never sent)
    die d;
    for (auto& c : cs) c | d;
    sys.stop();
}

TEST_CASE("a one-shot cancelled from its own delivery: cancel returns false, no harm") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        self_canceller a;
        start_every s;
        a | s;
        a.done.get();
        troupe_test::wait_until([&] { return pending() == 0; });
        CHECK_FALSE(a.result);
        die d;
        a | d;
        sys.stop();
    });
}
