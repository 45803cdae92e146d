// Several actor and message types, inheritance of actors and messages, the
// receive chosen at compile time (Cforall tests "types" and "inherit").
#include <mutex>
#include <string>
#include <vector>

#include "actor_fixture.hpp"

using troupe_test::on_workers;

namespace {

std::mutex log_mutex;
std::vector<std::string> log_lines;
void note(std::string s) {
    std::lock_guard g{log_mutex};
    log_lines.push_back(std::move(s));
}
std::vector<std::string> take_log() {
    std::lock_guard g{log_mutex};
    return std::exchange(log_lines, {});
}

struct d_msg : troupe::message {
    int num = 0;
};
struct d_msg2 : d_msg {};  // inherits; gets its own receive where one exists
struct other_msg : troupe::message {
    int num = 0;
};

struct base_actor : troupe::actor {
    int counter = 0;
    troupe::allocation receive(d_msg& m) {
        note("base d_msg " + std::to_string(m.num));
        return ++counter == 2 ? troupe::Finished : troupe::Nodelete;
    }
};

// Inherits base_actor's receive(d_msg&) and adds one for other_msg.
struct derived_actor : base_actor {
    using base_actor::receive;
    troupe::allocation receive(other_msg& m) {
        note("derived other_msg " + std::to_string(m.num));
        return m.num < 0 ? troupe::Nodelete : troupe::Finished;
    }
};
struct derived_actor2 : derived_actor {};  // nested inheritance

// Distinguishes a base message from a derived one.
struct picky : troupe::actor {
    troupe::allocation receive(d_msg&) {
        note("picky base");
        return troupe::Nodelete;
    }
    troupe::allocation receive(d_msg2&) {
        note("picky derived");
        return troupe::Finished;
    }
};

// A receive as a free function, found by argument-dependent lookup.
struct free_style : troupe::actor {
    int got = 0;
};
troupe::allocation receive(free_style& a, other_msg& m) {
    a.got = m.num;
    return troupe::Finished;
}

}  // namespace

TEST_CASE("cascaded sends to one actor arrive in order; the second finishes it") {
    on_workers([](std::size_t w) {
        take_log();
        troupe::actor_system sys{w};
        base_actor a;
        d_msg b, c;
        b.num = 1;
        c.num = 2;
        a | b | c;
        sys.stop();
        CHECK(take_log() == std::vector<std::string>{"base d_msg 1", "base d_msg 2"});
        CHECK(a.finished());
    });
}

TEST_CASE("one message to two actors of the same type, and to two actor types") {
    troupe::actor_system_config cfg;
    cfg.workers = 3;
    cfg.mailboxes = 12;
    troupe::actor_system sys{cfg};
    base_actor a1, a2;
    derived_actor2 a3;
    d_msg m;
    m.num = 3;
    a1 | m | m;
    a2 | m | m;
    a3 | m | m;
    sys.stop();
    auto log = take_log();
    CHECK(log.size() == 6);
    for (auto& l : log) CHECK(l == "base d_msg 3");
    CHECK((a1.finished() && a2.finished() && a3.finished()));
}

TEST_CASE("two message types to one actor, and through nested inheritance") {
    on_workers([](std::size_t w) {
        other_msg minus, five;
        minus.num = -1;
        five.num = 5;
        {
            take_log();
            troupe::actor_system sys{w};
            derived_actor d;
            d | minus | five;
            sys.stop();
            CHECK(take_log() ==
                  std::vector<std::string>{"derived other_msg -1", "derived other_msg 5"});
            CHECK(d.finished());
        }
        {
            troupe::actor_system sys{w};
            derived_actor2 d2;  // receives through two levels of inheritance
            d2 | minus | five;
            sys.stop();
            CHECK(take_log() ==
                  std::vector<std::string>{"derived other_msg -1", "derived other_msg 5"});
        }
    });
}

TEST_CASE("the static type of the message picks the receive") {
    troupe::actor_system sys{2};
    picky p;
    d_msg base;
    d_msg2 derived;
    p | base | derived;
    sys.stop();
    CHECK(take_log() == std::vector<std::string>{"picky base", "picky derived"});
}

TEST_CASE("a free-function receive found by argument-dependent lookup") {
    troupe::actor_system sys{1};
    free_style f;
    other_msg m;
    m.num = 77;
    f | m;
    sys.stop();
    CHECK(f.got == 77);
}
