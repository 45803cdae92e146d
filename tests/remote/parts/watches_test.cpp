// Monitors across ranks without MPI: the watching rank's stand-ins (one per
// remote actor, ended once by a down, by their rank's end or by the
// world's end) with local watchers on them, and the watched rank's direct
// monitor entries (a relay's: called in place, once, when the actor ends).
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "leak_check.hpp"
#include "scale.hpp"
#include "troupe/actor_system.hpp"
#include "troupe/future.hpp"
#include "troupe/monitor.hpp"
#include "troupe/poison_pill.hpp"
#include "troupe/request.hpp"
#include "watches.hpp"

namespace rd = troupe::remote::detail;
using kind = troupe::exit_reason::kind;

namespace {

struct count_q : troupe::request<std::size_t> {};

// Records its downs; a count_q answers how many it has (its mailbox is
// FIFO: a down queued before the ask is counted).
struct watcher : troupe::actor {
    std::vector<std::pair<const troupe::actor*, troupe::exit_reason>> downs;
    void receive(troupe::down& d) { downs.emplace_back(d.who, d.reason); }
    void receive(count_q& q) { q.reply(downs.size()); }
};

std::size_t downs_of(watcher& w) {
    count_q q;
    return troupe::ask(w, q).get();
}

troupe::exit_reason reason(kind k, std::string what = {}) {
    troupe::exit_reason r;
    r.why = k;
    r.what = std::move(what);
    return r;
}

}  // namespace

TEST_CASE("watches: a stand-in's end reaches its watchers once, with the remote reason") {
    troupe::actor_system sys{2};
    watcher w, late;
    rd::watch_table t;
    rd::watch_table::stand_in& s = t.get(1, 7);
    CHECK(&t.get(1, 7) == &s);  // one stand-in per remote actor
    CHECK(t.find(1, 7) == &s);
    CHECK(t.find(1, 8) == nullptr);
    CHECK(&t.get(2, 7) != &s);
    CHECK(troupe::monitor(w, s));
    CHECK(troupe::monitor(w, s));  // twice: two downs
    CHECK(t.end(s.token, reason(kind::threw, "std::runtime_error: overdrawn")));
    CHECK(t.end(s.token, reason(kind::finished)));  // a second down: nothing
    t.end_rank(1);                                  // its rank ends later: nothing
    REQUIRE(downs_of(w) == 2);
    for (auto& [who, why] : w.downs) {
        CHECK(who == &s);
        CHECK(why.why == kind::threw);
        CHECK(why.what == "std::runtime_error: overdrawn");
    }
    // A monitor placed after the end fires at once, with the same reason.
    CHECK(troupe::monitor(late, s));
    REQUIRE(downs_of(late) == 1);
    CHECK(late.downs[0].second.to_string() == "threw: std::runtime_error: overdrawn");
    CHECK_FALSE(t.end(12345, reason(kind::finished)));  // a token nobody has
    std::size_t all = 0, ended = 0;
    CHECK(t.count(all, ended));
    CHECK(all == 2);
    CHECK(ended == 1);
    w | troupe::finished_msg;
    late | troupe::finished_msg;
    sys.stop();
}

TEST_CASE("watches: a rank's end ends its stand-ins with 'rank N lost', no others") {
    troupe::actor_system sys{2};
    watcher w1, w2, gone;
    rd::watch_table t;
    rd::watch_table::stand_in& a = t.get(1, 1);
    rd::watch_table::stand_in& b = t.get(1, 2);
    rd::watch_table::stand_in& c = t.get(2, 1);
    // A monitor taken back before the end hears nothing; placed first, so
    // that its down would be queued before the others' (checked after them).
    CHECK(troupe::monitor(gone, a));
    CHECK(troupe::demonitor(gone, a));
    CHECK(troupe::monitor(w1, a));
    CHECK(troupe::monitor(w1, b));
    CHECK(troupe::monitor(w2, c));
    t.end_rank(1);
    REQUIRE(downs_of(w1) == 2);
    for (auto& [who, why] : w1.downs) {
        CHECK((who == &a || who == &b));
        CHECK(why.why == kind::rank_lost);
        CHECK(why.what == "rank 1 lost");
        CHECK(why.failure());
    }
    CHECK(downs_of(w2) == 0);
    CHECK(downs_of(gone) == 0);
    // A poison pill there before this rank's world ends: the pill stands.
    CHECK(t.end(c.token, reason(kind::poison_pill)));
    t.end_all();
    REQUIRE(downs_of(w2) == 1);
    CHECK(w2.downs[0].second.why == kind::poison_pill);
    // A stand-in first monitored after its rank ended.
    rd::watch_table::stand_in& d = t.get(3, 1);
    t.end_all();
    CHECK(troupe::monitor(w2, d));
    REQUIRE(downs_of(w2) == 2);
    CHECK(w2.downs[1].second.to_string() == "rank lost: rank 3 lost");
    w1 | troupe::finished_msg;
    w2 | troupe::finished_msg;
    gone | troupe::finished_msg;
    sys.stop();
}

TEST_CASE("watches: downs racing their rank's end end each stand-in exactly once") {
    const int n = troupe_test::scaled(400);
    troupe::actor_system sys{2};
    watcher w;
    rd::watch_table t;
    std::vector<rd::watch_table::stand_in*> ins;
    for (int i = 0; i < n; ++i) {
        ins.push_back(&t.get(1, static_cast<std::uint64_t>(i)));
        CHECK(troupe::monitor(w, *ins.back()));
    }
    std::atomic<bool> go{false};
    std::thread downs([&] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        for (int i = n - 1; i >= 0; --i)
            (void)t.end(ins[std::size_t(i)]->token, reason(kind::finished));
    });
    std::thread lost([&] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        t.end_rank(1);
    });
    go.store(true, std::memory_order_release);
    downs.join();
    lost.join();
    REQUIRE(downs_of(w) == static_cast<std::size_t>(n));
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    for (auto& [who, why] : w.downs)
        for (int i = 0; i < n; ++i)
            if (who == ins[std::size_t(i)]) ++seen[std::size_t(i)];
    int wrong = 0;
    for (int k : seen)
        if (k != 1) ++wrong;
    CHECK(wrong == 0);
    w | troupe::finished_msg;
    sys.stop();
}

namespace {

// A direct monitor entry, as the watched rank's relay places one: called in
// place on the thread that ends the actor.
std::atomic<int> direct_calls{0};
troupe::exit_reason direct_reason;
troupe::future<void>* direct_done = nullptr;
troupe::allocation direct_fn(troupe::actor*, troupe::message& m) {
    auto& d = static_cast<troupe::down&>(m);
    direct_reason = d.reason;
    direct_calls.fetch_add(1, std::memory_order_relaxed);
    delete &d;
    if (direct_done) direct_done->fulfil();
    return troupe::Nodelete;
}

struct victim : troupe::actor {
    troupe::allocation receive(count_q& q) {
        q.reply(0);
        return troupe::Nodelete;
    }
};

struct relay_like final : troupe::actor {
    relay_like() noexcept : troupe::actor(troupe::detail::stand_in_t{}) {}
};

bool watch_direct(relay_like& r, troupe::actor& a) {
    return troupe::detail::add_monitor(
        r, a, {&r, &direct_fn, &troupe::detail::quiet_names_of<relay_like, troupe::down>, true});
}

}  // namespace

TEST_CASE("watches: a direct monitor entry is called in place, once, with the reason") {
    troupe::actor_system sys{2};
    relay_like r;
    CHECK(r.finished());  // a stand-in counts nowhere and reads as finished
    victim v;
    troupe::future<void> done;
    direct_done = &done;
    direct_calls = 0;
    CHECK(watch_direct(r, v));
    v | troupe::finished_msg;
    done.get();
    CHECK(direct_calls == 1);
    CHECK(direct_reason.why == kind::poison_pill);
    // On an actor that has ended: at once, on this thread.
    direct_done = nullptr;
    CHECK(watch_direct(r, v));
    CHECK(direct_calls == 2);
    CHECK(direct_reason.why == kind::poison_pill);
    sys.stop();
}
