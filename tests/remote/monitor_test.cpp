// Monitors of actors on other ranks (troupe/remote/monitor.hpp): each rank
// watches the next rank's actors, which end in every way an actor ends
// there; each monitor delivers one down with that end's reason, a
// demonitored one none, a monitor of an actor that had ended fires at once,
// and a watcher sees the messages the actor sent it before its down. (A
// rank that ends early: rank_end_program.cpp, mode monitor.)
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "remote_fixture.hpp"

namespace remote = troupe::remote;
using kind = troupe::exit_reason::kind;

struct boom : troupe::message {};
TROUPE_REMOTE_MESSAGE(boom, "test.monitor.boom");
struct talk : troupe::message {
    int n = 0;
};
TROUPE_REMOTE_MESSAGE(talk, "test.monitor.talk", &talk::n);
struct said : troupe::message {
    int i = 0;
};
TROUPE_REMOTE_MESSAGE(said, "test.monitor.said", &said::i);

namespace {

struct count_q : troupe::request<std::size_t> {};

struct watcher : troupe::actor {
    struct seen {
        const troupe::actor* who;
        troupe::exit_reason why;
        int said_before;  // the numbered messages received before this down
    };
    std::vector<seen> downs;
    int said_count = 0, said_out_of_order = 0;
    std::size_t expect = 0;
    troupe::future<void> got;  // `expect` downs came
    void receive(troupe::down& d) {
        downs.push_back({d.who, d.reason, said_count});
        if (downs.size() == expect) got.fulfil();
    }
    void receive(said& s) {
        if (s.i != said_count) ++said_out_of_order;
        ++said_count;
    }
    void receive(count_q& q) { q.reply(downs.size()); }
};

struct ping_q : troupe::request<int> {};

struct victim : troupe::actor {
    remote::remote_ref<watcher> back;  // the watcher on the previous rank
    troupe::allocation receive(boom&) { throw std::runtime_error("overdrawn"); }
    troupe::allocation receive(ping_q& q) {
        q.reply(1);
        return troupe::Nodelete;
    }
    troupe::allocation receive(talk& t) {
        for (int i = 0; i < t.n; ++i) {
            said s;
            s.i = i;
            back | s;
        }
        return troupe::Finished;
    }
};

// A local watcher that waits for one down (to know an actor has ended).
struct local_watcher : troupe::actor {
    troupe::future<void> got;
    void receive(troupe::down&) { got.fulfil(); }
};

std::size_t downs_of(troupe::actor& a) {
    count_q q;
    return troupe::ask(static_cast<watcher&>(a), q).get();
}

void ignore_misuse(std::string_view) {}

troupe::allocation quiet_handler(const troupe::behaviour_exception&) { return troupe::Finished; }

}  // namespace

TEST_CASE("a remote actor's end reaches each monitor once, with how it ended there") {
    remote::world& w = remote_test::world();
    const int me = w.rank(), next = (me + 1) % w.size(), prev = (me + w.size() - 1) % w.size();
    troupe::actor_system_config cfg;
    cfg.workers = 2;
    cfg.on_behaviour_exception = &quiet_handler;  // boom's throw ends its actor quietly
    troupe::actor_system sys{cfg};
    watcher mon, gone;
    victim pill, threw, done, demon, twice, talker;
    const std::string r = std::to_string(me);
    w.publish("mon.w." + r, mon);
    const std::pair<const char*, victim*> victims[] = {{"pill", &pill},   {"threw", &threw},
                                                       {"done", &done},   {"demon", &demon},
                                                       {"twice", &twice}, {"talker", &talker}};
    for (auto& [name, v] : victims) w.publish(std::string{"mon."} + name + "." + r, *v);
    // `done` ends before anyone monitors it.
    local_watcher lw;
    REQUIRE(troupe::monitor(lw, done));
    talk quit;  // n = 0: its behaviour returns Finished at once
    done | quit;
    lw.got.get();
    w.barrier();  // every rank published, and its `done` has ended
    talker.back = w.lookup<watcher>(prev, "mon.w." + std::to_string(prev));
    {
        // A local ask orders that write before the talker's behaviours in a
        // way ThreadSanitizer sees (the talk comes through MPI, which it
        // does not instrument).
        ping_q q;
        REQUIRE(troupe::ask(talker, q).get() == 1);
    }
    auto ref = [&](const char* name) {
        return w.lookup<victim>(next, std::string{"mon."} + name + "." + std::to_string(next));
    };
    auto r_pill = ref("pill"), r_threw = ref("threw"), r_done = ref("done"), r_demon = ref("demon"),
         r_twice = ref("twice"), r_talker = ref("talker");
    w.barrier();  // every talker knows its watcher

    mon.expect = 7;
    const troupe::actor* who_pill = remote::monitor(mon, r_pill);
    const troupe::actor* who_threw = remote::monitor(mon, r_threw);
    const troupe::actor* who_done = remote::monitor(mon, r_done);
    // Taken back before the end: `gone` is monitored first, so its down, if
    // it were sent, would be queued before mon's.
    REQUIRE(remote::monitor(gone, r_demon) != nullptr);
    const troupe::actor* who_demon = remote::monitor(mon, r_demon);
    CHECK(remote::demonitor(gone, r_demon));
    CHECK_FALSE(remote::demonitor(gone, r_demon));
    const troupe::actor* who_twice = remote::monitor(mon, r_twice);
    CHECK(remote::monitor(mon, r_twice) == who_twice);  // one identity per remote actor
    const troupe::actor* who_talker = remote::monitor(mon, r_talker);
    for (const troupe::actor* p : {who_pill, who_threw, who_done, who_demon, who_twice, who_talker})
        REQUIRE(p != nullptr);
    CHECK(who_pill != who_threw);

    r_pill | troupe::finished_msg;
    r_threw | boom{};
    r_demon | troupe::finished_msg;
    r_twice | troupe::finished_msg;
    talk go;
    go.n = 100;
    r_talker | go;
    mon.got.get();  // seven downs

    auto find = [&](const troupe::actor* who) {
        std::vector<watcher::seen> v;
        for (auto& s : mon.downs)
            if (s.who == who) v.push_back(s);
        return v;
    };
    auto one = [&](const troupe::actor* who, kind k) {
        auto v = find(who);
        REQUIRE(v.size() == 1);
        CHECK(v[0].why.why == k);
        return v[0];
    };
    one(who_pill, kind::poison_pill);
    const auto t = one(who_threw, kind::threw);
    CHECK(t.why.what.find("std::runtime_error") != std::string::npos);
    CHECK(t.why.what.find("overdrawn") != std::string::npos);
    CHECK(one(who_done, kind::finished).why.what.empty());
    one(who_demon, kind::poison_pill);
    const auto tw = find(who_twice);
    REQUIRE(tw.size() == 2);
    for (auto& s : tw) CHECK(s.why.why == kind::poison_pill);
    // The talker's messages came before its down, in order.
    CHECK(one(who_talker, kind::finished).said_before == 100);
    CHECK(mon.said_out_of_order == 0);
    CHECK(downs_of(gone) == 0);
    CHECK(downs_of(mon) == 7);

    // A second monitor of an ended remote actor fires at once (no round trip).
    watcher again;
    again.expect = 1;
    CHECK(remote::monitor(again, r_threw) == who_threw);
    again.got.get();
    CHECK(again.downs[0].why.to_string() == t.why.to_string());

    w.barrier();  // every rank is done with the others' actors
    mon | troupe::finished_msg;
    gone | troupe::finished_msg;
    again | troupe::finished_msg;
    lw | troupe::finished_msg;
    w.stop(sys);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

TEST_CASE("a monitor of an actor that was destroyed, or never published, says so") {
    remote::world& w = remote_test::world();
    const int me = w.rank(), next = (me + 1) % w.size();
    troupe::actor_system sys{2};
    watcher mon;
    {
        auto v = std::make_unique<victim>();
        w.publish("mon.destroyed." + std::to_string(me), *v);
        // As a main unwinding from an exception would: the live actor goes
        // (checked builds report it).
        const troupe::misuse_handler old = troupe::set_misuse_handler(&ignore_misuse);
        v.reset();
        troupe::set_misuse_handler(old);
    }
    // Its id stays known (ids are publication indexes + 1, never reused):
    // the destroyed actor's is the one before keep's.
    victim keep;
    w.publish("mon.keep." + std::to_string(me), keep);
    w.barrier();
    auto k = w.lookup<victim>(next, "mon.keep." + std::to_string(next));
    remote::remote_ref<victim> destroyed{w.engine(), next, k.id() - 1};
    mon.expect = 1;
    const troupe::actor* who = remote::monitor(mon, destroyed);
    REQUIRE(who != nullptr);
    mon.got.get();
    CHECK(mon.downs[0].why.why == kind::destroyed);
    CHECK(mon.downs[0].why.what.find("mon.destroyed." + std::to_string(next)) != std::string::npos);
    w.barrier();
    keep | troupe::finished_msg;
    mon | troupe::finished_msg;
    w.stop(sys);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
