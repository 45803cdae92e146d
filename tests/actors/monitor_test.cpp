// Monitors and links: down{who, reason} exactly once per monitor, for each
// way an actor ends; demonitor; a down at once for an actor already ended;
// monitoring oneself; an actor of a stopped system; links that kill, links
// trapped as messages, a link cycle, and a supervisor that throws while
// restarting.
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "actor_fixture.hpp"
#include "leak_check.hpp"

using namespace std::chrono_literals;
using troupe::exit_reason;
using troupe_test::on_workers;

namespace {

struct die : troupe::message {};
struct boom : troupe::message {};
struct watch : troupe::message {
    troupe::actor* target = nullptr;
};
struct unwatch : troupe::message {
    troupe::actor* target = nullptr;
};
struct count_q : troupe::request<std::size_t> {};

// An actor that ends the way it is told.
struct mortal : troupe::actor {
    using troupe::actor::actor;
    troupe::allocation receive(die&) { return troupe::Finished; }
    void receive(boom&) { throw std::runtime_error("kaboom"); }
    void receive(count_q& q) { q.reply(0); }
};

// Records the downs it receives; fulfils `all` when it has `expect` of them.
struct watcher : troupe::actor {
    using troupe::actor::actor;
    std::mutex m;
    std::vector<std::pair<const troupe::actor*, exit_reason>> downs;
    std::size_t expect = 1;
    troupe::future<void> all;
    void receive(troupe::down& d) {
        std::lock_guard g{m};
        downs.emplace_back(d.who, d.reason);
        if (downs.size() == expect) all.fulfil();
    }
    void receive(watch& w) { troupe::monitor(*this, *w.target); }
    void receive(unwatch& w) { troupe::demonitor(*this, *w.target); }
    void receive(count_q& q) {
        std::lock_guard g{m};
        q.reply(downs.size());
    }
    troupe::allocation receive(die&) { return troupe::Finished; }
};

// Ends when told; traps exits if asked, recording them.
struct linked : troupe::actor {
    std::vector<std::pair<const troupe::actor*, exit_reason>> exits;
    troupe::future<void> got_exit;
    void receive(troupe::exit_msg& e) {
        exits.emplace_back(e.who, e.reason);
        if (!got_exit.available()) got_exit.fulfil();
    }
    troupe::allocation receive(die&) { return troupe::Finished; }
    void receive(boom&) { throw std::runtime_error("link kaboom"); }
    void receive(count_q& q) { q.reply(exits.size()); }
};

// Quiet behaviour-exception handler (the default prints on stderr).
troupe::actor_system_config quiet(std::size_t w) {
    troupe::actor_system_config c;
    c.workers = w;
    c.on_behaviour_exception = [](const troupe::behaviour_exception&) { return troupe::Finished; };
    return c;
}

}  // namespace

TEST_CASE("a down reports each way an actor ends, exactly once") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{quiet(w)};
        watcher wt;
        wt.expect = 4;
        mortal fin, pill, thr;
        auto* del = new mortal;
        CHECK(troupe::monitor(wt, fin));
        CHECK(troupe::monitor(wt, pill));
        CHECK(troupe::monitor(wt, thr));
        CHECK(troupe::monitor(wt, *del));
        die d;
        boom b;
        fin | d;
        pill | troupe::finished_msg;
        thr | b;
        *del | troupe::delete_msg;
        wt.all.get();
        {
            std::lock_guard g{wt.m};
            REQUIRE(wt.downs.size() == 4);
            for (auto& [who, r] : wt.downs) {
                if (who == &fin) CHECK(r.why == exit_reason::kind::finished);
                else if (who == &pill) CHECK(r.why == exit_reason::kind::poison_pill);
                else if (who == &thr) {
                    CHECK(r.why == exit_reason::kind::threw);
                    CHECK(troupe_test::contains(r.what, "kaboom"));
                    CHECK(troupe_test::contains(r.to_string(), "threw"));
                    CHECK(r.failure());
                } else {
                    CHECK(who == del);
                    CHECK(r.why == exit_reason::kind::poison_pill);
                    CHECK_FALSE(r.failure());
                }
            }
        }
        // Exactly once: nothing more arrives (FIFO from main after the end).
        count_q q;
        CHECK(troupe::ask(wt, q).get() == 4);
        wt | d;
        sys.stop();
    });
}

TEST_CASE("a down comes at once for an actor that already ended, with its reason") {
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{quiet(2)};
    mortal fin, pill, thr;
    die d;
    boom b;
    fin | d;
    pill | troupe::finished_msg;
    thr | b;
    for (mortal* m : {&fin, &pill, &thr}) troupe_test::wait_until([m] { return m->finished(); });
    watcher wt;
    wt.expect = 3;
    CHECK(troupe::monitor(wt, fin));
    CHECK(troupe::monitor(wt, pill));
    CHECK(troupe::monitor(wt, thr));
    wt.all.get();
    for (auto& [who, r] : wt.downs) {
        if (who == &fin) CHECK(r.why == exit_reason::kind::finished);
        if (who == &pill) CHECK(r.why == exit_reason::kind::poison_pill);
        if (who == &thr) {
            CHECK(r.why == exit_reason::kind::threw);
            CHECK(troupe_test::contains(r.what, "kaboom"));  // kept for a later monitor
        }
    }
    wt | d;
    sys.stop();
}

TEST_CASE("demonitor: no down after it") {
    // One worker: the end's downs are in their mailboxes before anyone runs
    // again, so the second watcher's down orders the check after them.
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{1};
    watcher quiet_one, other;
    mortal m;
    CHECK(troupe::monitor(quiet_one, m));
    CHECK(troupe::monitor(other, m));
    CHECK(troupe::demonitor(quiet_one, m));
    CHECK_FALSE(troupe::demonitor(quiet_one, m));  // nothing left to remove
    die d;
    m | d;
    other.all.get();
    count_q q;
    CHECK(troupe::ask(quiet_one, q).get() == 0);
    quiet_one | d;
    other | d;
    sys.stop();
}

TEST_CASE("monitoring oneself never fires; others still get their down") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        watcher self, other;
        watch ws;
        ws.target = &self;
        self | ws;  // monitors itself from its own behaviour
        CHECK(troupe::monitor(other, self));
        die d;
        self | d;
        other.all.get();
        CHECK(other.downs.size() == 1);
        CHECK(other.downs[0].first == &self);
        CHECK(self.downs.empty());
        other | d;
        sys.stop();
    });
}

TEST_CASE("monitors racing the ends of many actors: each down exactly once") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        const std::size_t n = troupe_test::scaled(2000, 10);
        std::vector<std::unique_ptr<mortal>> ms;
        for (std::size_t i = 0; i < n; ++i) ms.push_back(std::make_unique<mortal>());
        watcher wt;
        wt.expect = n;
        std::vector<watch> ws(n);
        // The watcher monitors from its behaviour while main ends them.
        for (std::size_t i = 0; i < n; ++i) {
            ws[i].target = ms[i].get();
            wt | ws[i];
            *ms[i] | troupe::finished_msg;
        }
        wt.all.get();
        std::set<const troupe::actor*> who;
        for (auto& [a, r] : wt.downs) {
            who.insert(a);
            CHECK(r.why == exit_reason::kind::poison_pill);
        }
        CHECK(who.size() == n);
        count_q q;
        CHECK(troupe::ask(wt, q).get() == n);  // no second down for anyone
        die d;
        wt | d;
        sys.stop();
    });
}

TEST_CASE("a monitor on an actor of a stopped system: down at once, system_stopped") {
    // No leak check: a system whose stop gave up is never freed (its
    // survivors point into it).
    troupe::actor_system a{1};
    troupe::actor_system b{2};
    mortal stuck{a}, stuck2{a};
    watcher early{b}, late{b};
    CHECK(troupe::monitor(early, stuck));
    const troupe::stop_report r = a.stop_for(1ms);  // stuck never finishes
    CHECK_FALSE(r.finished);
    early.all.get();  // told when the stop gave up
    CHECK(early.downs[0].second.why == exit_reason::kind::system_stopped);
    CHECK(troupe::monitor(late, stuck2));
    late.all.get();
    CHECK(late.downs[0].first == &stuck2);
    CHECK(late.downs[0].second.why == exit_reason::kind::system_stopped);
    die d;
    early | d;
    late | d;
    b.stop();
}

TEST_CASE("a failing linked actor takes its partner with it; a normal end does not") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{quiet(w)};
        linked a, b, c, d;
        watcher wt;
        wt.expect = 2;
        troupe::monitor(wt, a);
        troupe::monitor(wt, b);
        CHECK(troupe::link(a, b));
        CHECK(troupe::link(a, b));  // once
        CHECK(troupe::link(c, d));
        boom bm;
        a | bm;
        wt.all.get();
        for (auto& [who, r] : wt.downs) {
            if (who == &a) CHECK(r.why == exit_reason::kind::threw);
            if (who == &b) {
                CHECK(r.why == exit_reason::kind::linked);
                CHECK(troupe_test::contains(r.what, "link kaboom"));
            }
        }
        CHECK(a.exits.empty());
        CHECK(b.exits.empty());  // not trapping: no message, it just ended
        // A normal end does not kill the partner.
        die dm;
        c | dm;
        count_q q;
        CHECK(troupe::ask(d, q).get() == 0);  // d is alive and answers
        d | dm;
        wt | dm;
        sys.stop();
    });
}

TEST_CASE("trap_exits: the exit arrives as a message and the actor lives on") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{quiet(w)};
        linked a, b;
        troupe::trap_exits(b);
        CHECK(troupe::link(a, b));
        boom bm;
        a | bm;
        b.got_exit.get();
        REQUIRE(b.exits.size() == 1);
        CHECK(b.exits[0].first == &a);
        CHECK(b.exits[0].second.why == exit_reason::kind::threw);
        // A link to an actor that already failed signals at once.
        linked c;
        troupe::trap_exits(c);
        CHECK_FALSE(troupe::link(c, a));
        c.got_exit.get();
        CHECK(c.exits[0].second.why == exit_reason::kind::threw);
        die dm;
        b | dm;
        c | dm;
        sys.stop();
    });
}

TEST_CASE("a link cycle A-B-C-A ends every actor exactly once") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{quiet(w)};
        linked a, b, c;
        watcher wt;
        wt.expect = 3;
        for (linked* x : {&a, &b, &c}) troupe::monitor(wt, *x);
        troupe::link(a, b);
        troupe::link(b, c);
        troupe::link(c, a);
        boom bm;
        a | bm;
        wt.all.get();
        std::set<const troupe::actor*> who;
        for (auto& [x, r] : wt.downs) {
            who.insert(x);
            CHECK(r.why == (x == &a ? exit_reason::kind::threw : exit_reason::kind::linked));
        }
        CHECK(who.size() == 3);
        count_q q;
        CHECK(troupe::ask(wt, q).get() == 3);
        die dm;
        wt | dm;
        sys.stop();
    });
}

namespace {
// A one-for-one supervisor whose restart throws the second time.
struct crashy : troupe::actor {
    void receive(boom&) { throw std::runtime_error("worker failed"); }
    troupe::allocation receive(die&) { return troupe::Finished; }
};
struct supervisor : troupe::actor {
    std::vector<std::unique_ptr<crashy>> workers;
    int restarts = 0;
    troupe::future<void> restarted;
    void start() {
        troupe::trap_exits(*this);
        for (int i = 0; i < 2; ++i) {
            workers.push_back(std::make_unique<crashy>());
            troupe::link(*this, *workers.back());
        }
    }
    void receive(troupe::exit_msg& e) {
        if (!e.reason.failure()) return;
        if (++restarts == 2) throw std::runtime_error("cannot restart");
        workers.push_back(std::make_unique<crashy>());
        troupe::link(*this, *workers.back());
        restarted.fulfil();
    }
    troupe::allocation receive(die&) { return troupe::Finished; }
};
}  // namespace

TEST_CASE("a supervisor that throws while restarting ends, and takes its workers with it") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{quiet(w)};
        supervisor s;
        s.start();
        watcher wt;
        wt.expect = 1;
        troupe::monitor(wt, s);
        watcher w1;
        troupe::monitor(w1, *s.workers[1]);  // the worker that never fails
        boom bm;
        *s.workers[0] | bm;  // fails: restarted once
        s.restarted.get();
        *s.workers[2] | bm;  // fails: the restart throws, the supervisor ends
        wt.all.get();
        CHECK(wt.downs[0].second.why == exit_reason::kind::threw);
        CHECK(troupe_test::contains(wt.downs[0].second.what, "cannot restart"));
        CHECK(s.restarts == 2);
        // Its exit signal ended the healthy worker (linked, not trapping).
        w1.all.get();
        CHECK(w1.downs[0].second.why == exit_reason::kind::linked);
        CHECK(troupe_test::contains(w1.downs[0].second.what, "cannot restart"));
        die dm;
        wt | dm;
        w1 | dm;
        sys.stop();  // returns: every actor ended
    });
}
