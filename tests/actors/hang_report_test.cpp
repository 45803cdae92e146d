// Actor-level hang reports: the dump's worker lines and the periodic stop
// report name the actor and message a blocked worker runs and what it waits
// on; a request cycle (A asks B inside a behaviour, B asks A back) is named
// with both actors; every worker blocked inside a behaviour is said as such
// (no poison-pill guess); "never sent a message" is printed only when true.
//
// The hang is made real, then reported through stop()'s periodic report
// (actor_system_config::on_stop_report, every 20 ms), whose hook also takes
// troupe::dump and then breaks the hang from outside, so stop() completes.
#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <utility>

#include "actor_fixture.hpp"
#include "troupe/channel.hpp"
#include "troupe/dump.hpp"

using namespace std::chrono_literals;
using troupe_test::contains;

namespace {

// The new user's request-cycle program: pinger asks ponger inside its
// behaviour; ponger asks pinger back inside its own.
struct start : troupe::message {};
struct ping : troupe::request<int> {};
struct pong : troupe::request<int> {};
struct ponger;

struct pinger : troupe::actor {
    ponger* peer = nullptr;
    ping q;
    std::atomic<bool>* peer_asked = nullptr;
    troupe::allocation receive(start&);
    troupe::allocation receive(pong& p) {
        if (!p.result().available()) p.reply(1);
        return troupe::Finished;
    }
};

struct ponger : troupe::actor {
    pinger* peer = nullptr;
    pong q;
    std::atomic<bool> asked{false};
    troupe::allocation receive(ping& p) {
        // The test answered the ping already (one worker: the cycle was
        // through the worker): nothing to ask.
        if (p.result().available()) return troupe::Finished;
        asked.store(true);
        const int v = troupe::ask(*peer, q).get();
        if (!p.result().available()) p.reply(v);
        return troupe::Finished;
    }
};

// The new user's pair, named, each the other's peer (the caller owns them).
std::pair<pinger*, ponger*> new_named_pair() {
    auto* a = new pinger;
    auto* b = new ponger;
    a->set_name("pinger");
    b->set_name("ponger");
    a->peer = b;
    b->peer = a;
    a->peer_asked = &b->asked;
    return {a, b};
}

troupe::allocation pinger::receive(start&) {
    (void)troupe::ask(*peer, q).get();
    // With ponger blocked on its ask to us, its pong is queued for us next.
    return peer_asked->load() ? troupe::Nodelete : troupe::Finished;
}

bool contains_text(const std::string& text, const char* what) {
    return text.find(what) != std::string::npos;
}

struct captured {
    std::string report;
    std::string dump;
    troupe::stop_report r;
    bool done = false;
};

void cycle_at(std::size_t workers) {
    CAPTURE(workers);
    static captured* seen;
    static pinger* the_pinger;
    static ponger* the_ponger;
    captured c;
    seen = &c;
    troupe::actor_system_config cfg;
    cfg.workers = workers;
    cfg.stop_report_period = 20ms;
    cfg.on_stop_report = [](const troupe::stop_report& r) {
        if (seen->done || r.cycles.empty()) return;  // the cycle may not have formed yet
        seen->done = true;
        seen->r = r;
        seen->report = r.to_string();
        std::ostringstream os;
        troupe::dump(os);
        seen->dump = os.str();
        // Break the cycle from outside: answer the innermost ask.
        if (the_ponger->asked.load()) the_ponger->q.reply(7);
        else the_pinger->q.reply(7);
    };
    troupe::actor_system sys{cfg};
    auto [a, b] = new_named_pair();
    the_pinger = a;
    the_ponger = b;
    start s;
    *a | s;
    sys.stop();
    REQUIRE(c.done);
    MESSAGE(c.report);
    // Both actors by name and type, and the word.
    CHECK(contains(c.report, "request cycle"));
    CHECK(contains(c.report, "actor 'pinger' (pinger)"));
    CHECK(contains(c.report, "actor 'ponger' (ponger)"));
    CHECK(contains(c.report, "its ask 'ping'"));
    if (b->asked.load()) CHECK(contains(c.report, "its ask 'pong'"));
    CHECK_FALSE(contains_text(c.report, "poison pill"));
    // Both were messaged: neither is called never messaged.
    CHECK(c.r.never_messaged == 0);
    CHECK_FALSE(contains_text(c.report, "never sent a message"));
    std::size_t named = 0;
    for (const auto& s : c.r.survivors) named += s.count;
    CHECK(named == 2);
    // The dump: the worker line of the blocked behaviour and the cycle.
    CHECK(contains(c.dump, "in actor 'pinger' (pinger), receiving 'start'"));
    CHECK(contains(c.dump, "the reply to its ask 'ping' to actor 'ponger' (ponger)"));
    CHECK(contains(c.dump, "request cycle"));
    CHECK_FALSE(contains_text(c.dump, "never messaged"));
    delete a;
    delete b;
}

}  // namespace

TEST_CASE("a request cycle is reported with both actors' names (1 worker: through the worker)") {
    troupe_test::watchdog w{"request cycle, 1 worker"};
    cycle_at(1);
}

TEST_CASE("a request cycle is reported with both actors' names (2 workers)") {
    troupe_test::watchdog w{"request cycle, 2 workers"};
    cycle_at(2);
}

namespace {

struct go : troupe::message {};
struct reader : troupe::actor {
    troupe::channel<int>* ch = nullptr;
    troupe::allocation receive(go&) {
        (void)ch->remove();  // blocks the only worker until the test sends
        return troupe::Finished;
    }
};
struct bystander : troupe::actor {
    troupe::allocation receive(go&) { return troupe::Finished; }
};

}  // namespace

TEST_CASE("every worker blocked inside a behaviour: said with what it waits on, no guess") {
    troupe_test::watchdog w{"every worker blocked"};
    static troupe::channel<int>* the_channel;
    static bystander* the_silent;
    static go* finish;
    static captured* seen;
    captured c;
    seen = &c;
    troupe::channel<int> ch{1, "jobs"};
    the_channel = &ch;
    troupe::actor_system_config cfg;
    cfg.workers = 1;
    cfg.stop_report_period = 20ms;
    cfg.on_stop_report = [](const troupe::stop_report& r) {
        if (seen->done || r.all_workers_blocked.empty()) return;
        seen->done = true;
        seen->r = r;
        seen->report = r.to_string();
        std::ostringstream os;
        troupe::dump(os);
        seen->dump = os.str();
        the_channel->insert(1);  // lets the behaviour end
        *the_silent | *finish;   // and the actor never messaged until now
    };
    troupe::actor_system sys{cfg};
    reader rd;
    rd.set_name("reader");
    rd.ch = &ch;
    bystander queued_for;  // messaged: its message waits behind the reader
    bystander silent;      // never messaged (until the report came)
    the_silent = &silent;
    go g1, g2, g3;
    finish = &g3;
    rd | g1;
    queued_for | g2;
    sys.stop();
    REQUIRE(c.done);
    MESSAGE(c.report);
    CHECK(contains(c.report, "every worker (1) is blocked inside a behaviour"));
    CHECK(contains(c.report, "in actor 'reader' (reader), receiving 'go'"));
    CHECK(contains(c.report, "on channel remove 'jobs'"));
    CHECK_FALSE(contains_text(c.report, "poison pill"));
    CHECK_FALSE(contains_text(c.report, "request cycle"));  // a channel is not an ask
    // Exactly the silent one was never messaged; the queued one is named.
    CHECK(c.r.never_messaged == 1);
    CHECK(contains(c.report, "1 never sent a message"));
    std::size_t bystanders = 0, readers = 0;
    for (const auto& s : c.r.survivors) {
        if (s.type == "bystander") bystanders = s.count;
        if (s.type == "reader") readers = s.count;
    }
    CHECK(bystanders == 1);
    CHECK(readers == 1);
    CHECK(c.r.blocked_workers == 1);
    CHECK(c.r.worker_count == 1);
    CHECK(contains(c.dump, "worker 0: in actor 'reader' (reader), receiving 'go'"));
    CHECK(contains(c.dump, "blocked for"));
    CHECK(contains(c.dump, "live actors never messaged: 1"));
}

namespace {
struct spin : troupe::message {};
struct spinner : troupe::actor {
    std::atomic<bool> started{false}, release{false};
    troupe::allocation receive(spin&) {
        started.store(true);
        while (!release.load()) {}  // computes: no troupe wait
        return troupe::Finished;
    }
};
}  // namespace

TEST_CASE("idle workers and a running behaviour are told apart in the dump") {
    troupe_test::watchdog w{"dump worker lines"};
    troupe::actor_system_config cfg;
    cfg.workers = 2;
    cfg.threads =
        troupe::worker_threads::kernel;  // a spinning user thread would hold its processor
    troupe::actor_system sys{cfg};
    {
        std::ostringstream os;
        troupe::dump(os);
        const std::string d = os.str();
        CHECK(contains(d, "worker 0: idle"));
        CHECK(contains(d, "worker 1: idle"));
    }
    spinner sp;
    spin m;
    sp | m;
    troupe_test::wait_until([&] { return sp.started.load(); });
    std::ostringstream os;
    troupe::dump(os);
    sp.release.store(true);
    sys.stop();
    const std::string d = os.str();
    CHECK(contains(d, "in a batch"));
    CHECK(contains(d, "not in a troupe wait"));
    CHECK(contains(d, "latest delivery: 'spin' to a spinner"));
}

namespace {
struct question : troupe::request<int> {};
struct answerer : troupe::actor {
    void receive(question& q) { q.reply(1); }
};
struct kick : troupe::message {};
struct asker : troupe::actor {
    answerer* to = nullptr;
    int rounds = 0;
    std::atomic<bool> done{false};
    troupe::allocation receive(kick&) {
        question q;
        for (int i = 0; i < rounds; ++i) {
            (void)troupe::ask(*to, q).get();  // blocks its worker briefly, every round
            q.reset();
        }
        done.store(true);
        return troupe::Finished;
    }
};
}  // namespace

TEST_CASE("dumps beside behaviours that block and wake all the time") {
    // The reports pin blocked workers, read their notes and batches, and
    // name actors while the workers block, wake, ask again and end: under
    // the sanitizers this is the race test of hang_report.cpp.
    troupe_test::watchdog w{"dumps beside blocking behaviours"};
    troupe::actor_system sys{3};
    answerer ans;
    asker a1, a2;
    a1.to = a2.to = &ans;
    a1.rounds = a2.rounds = troupe_test::scaled(2000);
    kick k1, k2;
    a1 | k1;
    a2 | k2;
    std::size_t dumps = 0, lines = 0;
    while (!a1.done.load() || !a2.done.load()) {
        std::ostringstream os;
        troupe::dump(os);
        ++dumps;
        if (os.str().find("the reply to its ask 'question' to actor answerer") != std::string::npos)
            ++lines;
    }
    ans | troupe::finished_msg;
    sys.stop();
    MESSAGE(dumps << " dumps, " << lines << " caught a worker blocked on its ask");
    CHECK(dumps > 0);
}

namespace {
struct holder : troupe::actor {
    explicit holder(troupe::actor_system& s) : troupe::actor(s) {}
    std::atomic<question*> held{nullptr};
    void receive(question& q) {
        q.defer();  // answered later, from outside
        held.store(&q);
    }
};
struct asks_other_system : troupe::actor {
    explicit asks_other_system(troupe::actor_system& s) : troupe::actor(s) {}
    holder* to = nullptr;
    troupe::allocation receive(kick&) {
        question q;
        (void)troupe::ask(*to, q).get();
        return troupe::Finished;
    }
};
}  // namespace

TEST_CASE("an ask to another system's actor is no cycle, even with every worker blocked") {
    troupe_test::watchdog w{"ask across systems"};
    static captured* seen;
    static holder* the_holder;
    captured c;
    seen = &c;
    troupe::actor_system other{2};
    holder h{other};
    h.set_name("holder");
    the_holder = &h;
    troupe::actor_system_config cfg;
    cfg.workers = 1;
    cfg.stop_report_period = 20ms;
    cfg.on_stop_report = [](const troupe::stop_report& r) {
        if (seen->done || r.all_workers_blocked.empty() || !the_holder->held.load()) return;
        seen->done = true;
        seen->r = r;
        seen->report = r.to_string();
        the_holder->held.load()->reply(1);
    };
    troupe::actor_system sys{cfg};
    asks_other_system a{sys};
    a.to = &h;
    kick k;
    a | k;
    sys.stop();
    h | troupe::finished_msg;
    other.stop();
    REQUIRE(c.done);
    MESSAGE(c.report);
    CHECK(c.r.cycles.empty());
    CHECK_FALSE(contains_text(c.report, "cycle"));
    CHECK(contains(c.report, "every worker (1) is blocked inside a behaviour"));
    CHECK(contains(c.report, "the reply to its ask 'question' to actor 'holder' (holder)"));
}

#if !defined(__SANITIZE_THREAD__)
// (TSan runs a thread of its own in every process: the everyone-asleep
// check then sees a thread outside troupe and, rightly, reports nothing.)
namespace {
std::string asleep_report;
troupe::future<int>* wake_main = nullptr;
pinger* asleep_pinger = nullptr;
ponger* asleep_ponger = nullptr;

void on_asleep(std::string_view text) {
    if (!asleep_report.empty()) return;
    asleep_report = std::string(text);
    // Break the cycle (the innermost ask first), then let main go on.
    if (asleep_ponger->asked.load()) asleep_ponger->q.reply(7);
    else asleep_pinger->q.reply(7);
    wake_main->fulfil(1);
}
}  // namespace

TEST_CASE("the everyone-asleep report names the request cycle") {
    for (std::size_t n : {1, 2}) {
        CAPTURE(n);
        asleep_report.clear();
        troupe::actor_system_config cfg;
        cfg.workers = n;
        cfg.stop_report_period = std::chrono::milliseconds::zero();
        troupe::actor_system sys{cfg};
        auto [a, b] = new_named_pair();
        asleep_pinger = a;
        asleep_ponger = b;
        troupe::future<int> main_waits;
        wake_main = &main_waits;
        auto previous = troupe::set_deadlock_handler(&on_asleep);
        start s;
        *a | s;
        (void)main_waits.get();  // main asleep too: nothing can wake anyone but the check
        troupe::set_deadlock_handler(previous);
        sys.stop();
        MESSAGE(asleep_report);
        CHECK(contains(asleep_report, "all threads are asleep"));
        // (Written from the lowest worker: either actor may come first.)
        CHECK(contains(asleep_report, "request cycle: actor '"));
        CHECK(contains(asleep_report, "actor 'pinger' (pinger)"));
        CHECK(contains(asleep_report, "actor 'ponger' (ponger)"));
        delete a;
        delete b;
    }
}
#endif

TEST_CASE("stop_for gives up on a request cycle: names it and leaves the blocked workers") {
    // Last in this file: the workers it leaves stay blocked until the
    // process exits (their systems and these actors are never freed).
    for (std::size_t n : {1, 2}) {
        CAPTURE(n);
        troupe_test::watchdog w{"stop_for, request cycle at " + std::to_string(n) + " worker(s)"};
        troupe::actor_system_config cfg;
        cfg.workers = n;
        cfg.stop_report_period = std::chrono::milliseconds::zero();
        troupe::actor_system sys{cfg};
        static start s;
        auto [a, b] = new_named_pair();  // never freed: a left worker holds them
        *a | s;
        // Wait for the cycle to form (the dump says when), then give up.
        troupe_test::wait_until([] {
            std::ostringstream os;
            troupe::dump(os);
            return os.str().find("request cycle") != std::string::npos;
        });
        const troupe::stop_report r = sys.stop_for(1ms);
        const std::string text = r.to_string();
        MESSAGE(text);
        CHECK_FALSE(r.finished);
        CHECK(r.workers_left == n);
        CHECK(r.cycles.size() == 1);
        CHECK(contains(text, "request cycle"));
        CHECK(contains(text, "actor 'pinger' (pinger)"));
        CHECK(contains(text, "actor 'ponger' (ponger)"));
        CHECK(contains(text, "left blocked inside a behaviour"));
        CHECK(r.never_messaged == 0);
        CHECK(sys.stopped());
    }
}
