// Request/reply across ranks: values (bytes and cereal), void replies,
// exceptions reaching the asker, asks from the main thread, from troupe user
// threads and from behaviours, and an ask inside waituntil with a timeout.
#include <stdexcept>

#include "remote_fixture.hpp"
#include "troupe/cluster.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
namespace remote = troupe::remote;

struct square : troupe::request<long> {
    long x = 0;
};
TROUPE_REMOTE_MESSAGE(square, "test.ask.square", &square::x);

struct greet : troupe::request<std::string> {
    std::string who;
};
TROUPE_REMOTE_MESSAGE(greet, "test.ask.greet", &greet::who);

struct fail : troupe::request<int> {
    int code = 0;
};
TROUPE_REMOTE_MESSAGE(fail, "test.ask.fail", &fail::code);

struct touch : troupe::request<> {};
TROUPE_REMOTE_MESSAGE(touch, "test.ask.touch");

// A reply the server holds back until released (for the timeout case).
struct held : troupe::request<int> {};
TROUPE_REMOTE_MESSAGE(held, "test.ask.held");
struct release : troupe::message {};
TROUPE_REMOTE_MESSAGE(release, "test.ask.release");

struct server : troupe::actor {
    int touched = 0;
    held* waiting = nullptr;
    troupe::allocation receive(square& q) {
        q.reply(q.x * q.x);
        return troupe::Nodelete;
    }
    troupe::allocation receive(greet& q) {
        q.reply("hello, " + q.who);
        return troupe::Nodelete;
    }
    troupe::allocation receive(fail& q) {
        throw std::out_of_range("code " + std::to_string(q.code) + " is out of range");
    }
    troupe::allocation receive(touch& q) {
        ++touched;
        q.reply();
        return troupe::Nodelete;
    }
    troupe::allocation receive(held& q) {
        q.defer();  // replied later, by receive(release&)
        waiting = &q;
        return troupe::Nodelete;
    }
    troupe::allocation receive(release&) {
        waiting->reply(7);
        return troupe::Nodelete;
    }
};

// Asks a remote server from inside a behaviour and records the answer.
struct go_ask : troupe::message {
    long x = 0;
};
struct asker : troupe::actor {
    remote::remote_ref<server> target;
    long answer = 0;
    troupe::future<> done;
    troupe::allocation receive(go_ask& g) {
        square q;
        q.x = g.x;
        answer = target.ask(q).get();  // blocks this worker until the reply
        done.fulfil();
        return troupe::Finished;
    }
};

struct fixture {
    remote::world& w = remote_test::world();
    troupe::actor_system sys{2};
    server mine;
    remote::remote_ref<server> next;
    explicit fixture(const std::string& name) {
        w.publish(name + std::to_string(w.rank()), mine);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        next = w.lookup<server>(n, name + std::to_string(n));
    }
    void finish() {
        w.barrier();  // every rank is done asking our server
        mine | troupe::finished_msg;
        w.stop(sys);
    }
};

TEST_CASE("ask from the main thread: values, strings, void, exceptions") {
    fixture f{"ask.a."};
    for (long x = -3; x <= 3; ++x) {
        square q;
        q.x = x;
        CHECK(f.next.ask(q).get() == x * x);
    }
    greet g;
    g.who = std::string(300, 'x');  // longer than any small-string buffer
    CHECK(f.next.ask(g).get() == "hello, " + g.who);
    touch t;
    f.next.ask(t).get();
    fail q;
    q.code = 42;
    try {
        f.next.ask(q).get();
        FAIL("expected an exception");
    } catch (const remote::remote_exception& e) {
        CHECK(e.rank() == f.next.rank());
        CHECK(e.type_name() == "std::out_of_range");
        CHECK(e.message() == "code 42 is out of range");
        CHECK(std::string{e.what()}.find("std::out_of_range") != std::string::npos);
    }
    // Reuse after reset, as locally.
    square r;
    r.x = 5;
    CHECK(f.next.ask(r).get() == 25);
    r.reset();
    r.x = 6;
    CHECK(f.next.ask(r).get() == 36);
    f.finish();
    CHECK(f.mine.touched == 1);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}

TEST_CASE("ask from troupe user threads and from behaviours") {
    fixture f{"ask.b."};
    {
        troupe::cluster c{2};
        std::vector<troupe::thread> ts;
        std::atomic<long> sum{0};
        for (int i = 0; i < 4; ++i)
            ts.emplace_back(c, [&, i] {
                for (int k = 0; k < 25; ++k) {
                    square q;
                    q.x = i * 100 + k;
                    sum += f.next.ask(q).get();
                }
            });
        for (auto& t : ts) t.join();
        long want = 0;
        for (int i = 0; i < 4; ++i)
            for (int k = 0; k < 25; ++k) want += long{i * 100 + k} * (i * 100 + k);
        CHECK(sum == want);
    }
    asker a;
    a.target = f.next;
    go_ask g;
    g.x = 12;
    a | g;
    a.done.get();
    f.finish();
    CHECK(a.finished());
    CHECK(a.answer == 144);
}

TEST_CASE("ask in waituntil with a timeout") {
    fixture f{"ask.c."};
    held q;
    auto& fut = f.next.ask(q);
    bool timed_out = false, replied = false;
    troupe::waituntil(troupe::on(fut, [&] { replied = true; }) |
                      troupe::on(troupe::timeout(20ms), [&] { timed_out = true; }));
    CHECK(timed_out);
    CHECK_FALSE(replied);
    release r;
    f.next | r;
    troupe::waituntil(troupe::on(fut, [&] { replied = true; }) |
                      troupe::on(troupe::timeout(60s), [&] { timed_out = false; }));
    CHECK(replied);
    CHECK(fut.get() == 7);
    f.finish();
}
