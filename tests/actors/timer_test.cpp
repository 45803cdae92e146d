// Actor timers: send_after / send_at / send_every and their cancel handles,
// from behaviours and other threads; the cancel race (once cancel() returns
// no delivery starts); cancelling from the timer's own delivery and twice;
// a timer whose actor has finished (dropped and counted, not a misuse);
// pending timers in the dump.
#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
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

namespace {

struct stamp : troupe::message {
    int id;
    explicit stamp(int i) : id(i) {}
};

// Records each delivery by timer id, and any delivery of a timer whose
// cancel() had already returned true.
struct recorder : troupe::actor {
    std::vector<std::atomic<int>>* got = nullptr;
    std::vector<std::atomic<bool>>* cancelled = nullptr;
    std::atomic<int>* late = nullptr;
    void receive(stamp& s) {
        // acquire: pairs with the canceller's release after cancel()
        // returned true; once it returned, this receive must not run.
        if ((*cancelled)[static_cast<std::size_t>(s.id)].load(std::memory_order_acquire))
            late->fetch_add(1, std::memory_order_relaxed);
        (*got)[static_cast<std::size_t>(s.id)].fetch_add(1, std::memory_order_relaxed);
    }
    troupe::allocation receive(die&) { return troupe::Finished; }
};

}  // namespace

// Several OS threads schedule and cancel at once: near timers (firing while
// others are cancelled, so cancels race the service's batches) among far
// ones (an hour ahead, keeping the heap past its eager size, so cancels are
// lazy and compactions run, concurrently with schedules and firings). Each
// timer is delivered exactly once or cancelled (cancel() true), never both;
// none is received after its cancel returned; every record is freed.
TEST_CASE("stress: threads schedule and cancel at once; each timer fires once or is cancelled") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        const int threads = 4;
        const int per = troupe_test::scaled(4000, 8);
        const auto total = static_cast<std::size_t>(threads * per);
        std::vector<std::atomic<int>> got(total);
        std::vector<std::atomic<bool>> cancelled(total);
        std::atomic<int> late{0};
        std::vector<recorder> rs(4);
        for (auto& r : rs) {
            r.got = &got;
            r.cancelled = &cancelled;
            r.late = &late;
        }
        std::atomic<long> cancels_true{0};
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
            ts.emplace_back([&, t] {
                std::mt19937 rng{static_cast<unsigned>(t + 1)};
                std::vector<troupe::timer_handle> hs;
                hs.reserve(static_cast<std::size_t>(per));
                auto cancel = [&](int k) {
                    if (hs[static_cast<std::size_t>(k)].cancel()) {
                        cancelled[static_cast<std::size_t>(t * per + k)].store(
                            true, std::memory_order_release);
                        cancels_true.fetch_add(1, std::memory_order_relaxed);
                    }
                };
                std::vector<bool> far_ones;
                for (int i = 0; i < per; ++i) {
                    const bool far = rng() % 2 == 0;
                    far_ones.push_back(far);
                    const auto delay =
                        far ? std::chrono::nanoseconds{1h}
                            : std::chrono::nanoseconds{std::chrono::microseconds{rng() % 2000}};
                    hs.push_back(
                        troupe::send_after<stamp>(rs[rng() % rs.size()], delay, t * per + i));
                    if (i >= 16 && rng() % 2 == 0) cancel(i - 1 - static_cast<int>(rng() % 16));
                }
                // The far ones must end by cancel (twice for some: false
                // then); the near ones not cancelled above must fire.
                for (int k = 0; k < per; ++k)
                    if (far_ones[static_cast<std::size_t>(k)]) cancel(k);
            });
        for (auto& th : ts) th.join();
        // Every flight ends: near ones delivered, cancelled ones dropped
        // (the far ones by compaction: all that is left of them is dead).
        troupe_test::wait_until([&] { return pending() == 0; });
        long delivered = 0;
        for (std::size_t id = 0; id < total; ++id) {
            const int g = got[id].load(std::memory_order_relaxed);
            const bool c = cancelled[id].load(std::memory_order_relaxed);
            delivered += g;
            if (g + (c ? 1 : 0) != 1) {
                CAPTURE(id);
                CAPTURE(g);
                CAPTURE(c);
                FAIL_CHECK("a timer was neither delivered once nor cancelled");
                break;
            }
        }
        CHECK(late.load() == 0);
        CHECK(delivered + cancels_true.load() == static_cast<long>(total));
        CHECK(troupe::detail::actor_timers_cancelled() == 0);
        die d;
        for (auto& r : rs) r | d;
        sys.stop();
    });
}

// A large heap is cancelled lazily: the entries stay, dead, shown apart in
// the dump, until a quarter of the heap is dead; the cancel that makes it
// so compacts and frees them; cancelling the rest frees everything.
TEST_CASE("a large heap: cancelled timers are dropped by compaction, not kept until due") {
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{1};
    counter c;
    const int n = 1000;
    std::vector<troupe::timer_handle> hs;
    for (int i = 0; i < n; ++i) hs.push_back(troupe::send_after<tick>(c, 1h, 1));
    CHECK(pending() == n);
    for (int i = 0; i < 100; ++i) CHECK(hs[static_cast<std::size_t>(i)].cancel());
    // Lazy: 100 dead entries (fewer than a quarter) still hold their blocks.
    CHECK(pending() == n);
    CHECK(troupe::detail::actor_timers_cancelled() == 100);
    CHECK(troupe_test::has(troupe_test::dump_now(),
                           "actor timers pending (all systems): 900 (and 100 cancelled"));
    for (int i = 100; i < 250; ++i) CHECK(hs[static_cast<std::size_t>(i)].cancel());
    // The 250th dead entry is a quarter of the heap: compacted.
    CHECK(pending() == n - 250);
    CHECK(troupe::detail::actor_timers_cancelled() == 0);
    for (auto& h : hs) h.cancel();
    CHECK(pending() == 0);  // all dead: every block freed before the last cancel returned
    for (auto& h : hs) CHECK_FALSE(h.pending());
    count_q q;
    CHECK(troupe::ask(c, q).get() == 0);
    die d;
    c | d;
    sys.stop();
}

namespace {
// A message whose members share the timer record's names (the record
// derives from it and from the timer parts).
struct same_names : troupe::message {
    int period = 1;
    int deadline = 2;
    int state = 3;
    int target = 4;
};
struct same_names_sink : troupe::actor {
    std::atomic<int> got{0};
    void receive(same_names& m) {
        if (m.period == 1 && m.deadline == 2 && m.state == 3 && m.target == 4) got.fetch_add(1);
    }
    troupe::allocation receive(die&) { return troupe::Finished; }
};
}  // namespace

TEST_CASE("a message with members named like the timer's parts: periodic and one-shot") {
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{2};
    same_names_sink a;
    auto p = troupe::send_every<same_names>(a, 1ms);
    auto o = troupe::send_after<same_names>(a, 1ms);
    troupe_test::wait_until([&] { return a.got.load() >= 3; });
    CHECK(p.cancel());
    troupe_test::wait_until([&] { return pending() == 0; });
    die d;
    a | d;
    sys.stop();
}
