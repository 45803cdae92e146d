// Exceptions escaping behaviours: the reply duty of requests
// (reply-then-throw, forwarded requests) and the behaviour-exception
// handler for everything else.
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "actor_fixture.hpp"
#include "capture_stderr.hpp"

using troupe_test::on_workers;

namespace {

// What the behaviour-exception handler saw, in order.
struct seen_exceptions {
    std::mutex m;
    std::vector<std::string> lines;
    troupe::allocation answer = troupe::Nodelete;

    troupe::behaviour_exception_handler handler() {
        return [this](const troupe::behaviour_exception& e) {
            std::lock_guard g{m};
            lines.push_back(e.actor_type + "|" + e.message_type + "|" + e.exception_type + "|" +
                            e.what);
            return answer;
        };
    }
    std::vector<std::string> get() {
        std::lock_guard g{m};
        return lines;
    }
};

troupe::actor_system_config config(std::size_t workers, seen_exceptions& seen) {
    auto c = troupe_test::workers(workers);
    c.on_behaviour_exception = seen.handler();
    return c;
}

struct answer : troupe::request<int> {};
struct boom : troupe::message {
    explicit boom(int n = 0) : n(n) {}
    int n;
};
struct count_msg : troupe::message {};

// Replies, waits until the requester has freed the request, then throws.
struct reply_then_throw : troupe::actor {
    troupe::future<void>* freed = nullptr;
    troupe::allocation receive(answer& q) {
        q.reply(42);
        freed->get();
        throw std::runtime_error("after the reply");
    }
};

struct answerer : troupe::actor {
    answerer() = default;
    explicit answerer(troupe::actor_system& s) : troupe::actor(s) {}
    troupe::allocation receive(answer& q) {
        q.reply(7);
        return troupe::Nodelete;
    }
};

// Forwards the request, optionally waits until the requester freed it,
// then throws.
struct forward_then_throw : troupe::actor {
    answerer* to = nullptr;
    troupe::future<void>* freed = nullptr;
    troupe::allocation receive(answer& q) {
        *to | q;
        if (freed) freed->get();
        throw std::logic_error("after the forward");
    }
};

struct thrower : troupe::actor {
    int received = 0;
    troupe::allocation receive(boom& b) {
        ++received;
        if (b.n >= 0) throw std::runtime_error("bad " + std::to_string(b.n));
        return troupe::Nodelete;
    }
    troupe::allocation receive(count_msg&) {
        ++received;
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("a behaviour that replies, then throws after the requester freed the request") {
    // Before the fix the dispatcher's catch read the freed request's future
    // (ASan: heap-use-after-free).
    on_workers([](std::size_t w) {
        seen_exceptions seen;
        troupe::actor_system sys{config(w, seen)};
        reply_then_throw a;
        troupe::future<void> freed;
        a.freed = &freed;
        auto q = std::make_unique<answer>();
        CHECK(troupe::ask(a, *q).get() == 42);
        q.reset();  // the requester may free it as soon as get() returns
        freed.fulfil();
        a | troupe::finished_msg;  // the handler said Nodelete: still running
        sys.stop();
        CHECK(seen.get() == std::vector<std::string>{
                                "reply_then_throw|answer|std::runtime_error|after the reply"});
        CHECK(a.finished());
    });
}

TEST_CASE(
    "a forwarded request: the forwardee's reply wins; the forwarder's exception goes to the "
    "handler") {
    // Before the fix the forwarder's dispatcher delivered its exception to
    // the requester (which then got logic_error instead of 7) and the
    // forwardee's reply raised future_error.
    on_workers([](std::size_t w) {
        seen_exceptions seen;
        troupe::actor_system sys{config(w, seen)};
        answerer b;
        forward_then_throw a;
        a.to = &b;
        for (int i = 0; i < 20; ++i) {
            answer q;
            CHECK(troupe::ask(a, q).get() == 7);
        }
        a | troupe::finished_msg;
        b | troupe::finished_msg;
        sys.stop();
        const auto lines = seen.get();
        CHECK(lines.size() == 20);
        for (const auto& l : lines)
            CHECK(l == "forward_then_throw|answer|std::logic_error|after the forward");
    });
}

TEST_CASE("a forwarder that throws after the requester freed the forwarded request") {
    // Before the fix: heap-use-after-free in the forwarder's catch (ASan).
    on_workers([](std::size_t w) {
        seen_exceptions seen;
        troupe::actor_system sys{config(w, seen)};
        troupe::actor_system other{1};  // answers while the forwarder blocks its worker
        answerer b{other};
        forward_then_throw a;
        troupe::future<void> freed;
        a.to = &b;
        a.freed = &freed;
        auto q = std::make_unique<answer>();
        CHECK(troupe::ask(a, *q).get() == 7);
        q.reset();
        freed.fulfil();
        a | troupe::finished_msg;
        b | troupe::finished_msg;
        sys.stop();
        other.stop();
        CHECK(seen.get() == std::vector<std::string>{
                                "forward_then_throw|answer|std::logic_error|after the forward"});
    });
}

TEST_CASE(
    "an exception from an ordinary behaviour reaches the system's handler with the names the user "
    "wrote") {
    on_workers([](std::size_t w) {
        seen_exceptions seen;
        troupe::actor_system sys{config(w, seen)};
        thrower t;
        troupe::send<boom>(t, 1);  // a value send: freed after the throwing receive (ASan: no leak)
        count_msg c;
        t | c;  // Nodelete from the handler: the actor keeps receiving
        t | troupe::finished_msg;
        sys.stop();
        CHECK(t.received == 2);
        CHECK(seen.get() == std::vector<std::string>{"thrower|boom|std::runtime_error|bad 1"});
    });
}

TEST_CASE("the handler may end the actor (Delete frees a heap actor)") {
    seen_exceptions seen;
    seen.answer = troupe::Delete;
    troupe::actor_system sys{config(2, seen)};
    auto* t = new thrower;
    troupe::send<boom>(*t, 3);
    sys.stop();  // returns: the handler ended the actor (ASan: freed)
    CHECK(seen.get().size() == 1);
}

TEST_CASE(
    "default policy: reported on stderr with the names and what(), the actor terminates as if "
    "Finished") {
    on_workers([](std::size_t w) {
        troupe_test::capture_stderr err;
        troupe::actor_system sys{w};
        thrower t;
        troupe::send<boom>(t, 5);
        sys.stop();  // returns without a poison pill: the actor was terminated
        CHECK(t.finished());
        CHECK(t.received == 1);
        const std::string text = err.text();
        CAPTURE(text);
        CHECK(text.find("actor 'thrower'") != std::string::npos);
        CHECK(text.find("receive of 'boom' threw std::runtime_error: bad 5") != std::string::npos);
        CHECK(text.find("terminated (as if it returned Finished") != std::string::npos);
    });
}

TEST_CASE("an exception that is not a std::exception") {
    struct odd : troupe::actor {
        troupe::allocation receive(count_msg&) { throw 17; }
    };
    seen_exceptions seen;
    troupe::actor_system sys{config(1, seen)};
    odd o;
    count_msg c;
    o | c | troupe::finished_msg;
    sys.stop();
    CHECK(seen.get() == std::vector<std::string>{"odd|count_msg|int|"});
}

TEST_CASE(
    "reply duty: replying twice throws future_error, reply_exception after a reply is ignored") {
    struct twice : troupe::actor {
        bool second_threw = false, exception_ignored = false;
        troupe::allocation receive(answer& q) {
            q.reply(1);
            try {
                q.reply(2);
            } catch (const troupe::future_error&) {
                second_threw = true;
            }
            exception_ignored =
                !q.reply_exception(std::make_exception_ptr(std::runtime_error("x")));
            return troupe::Nodelete;
        }
    };
    troupe::actor_system sys{1};
    twice t;
    answer q;
    CHECK(troupe::ask(t, q).get() == 1);
    t | troupe::finished_msg;
    sys.stop();
    CHECK(t.second_threw);
    CHECK(t.exception_ignored);
}

TEST_CASE(
    "a deferred request is answered later by another thread; the behaviour's exception goes to the "
    "handler") {
    struct keeper : troupe::actor {
        answer* kept = nullptr;
        troupe::future<void>* taken = nullptr;
        troupe::allocation receive(answer& q) {
            q.defer();
            kept = &q;
            taken->fulfil();
            throw std::runtime_error("after defer");
        }
    };
    seen_exceptions seen;
    troupe::actor_system sys{config(2, seen)};
    keeper k;
    troupe::future<void> taken;
    k.taken = &taken;
    answer q;
    auto& f = troupe::ask(k, q);
    taken.get();
    std::thread replier{[&] { k.kept->reply(9); }};
    CHECK(f.get() == 9);
    replier.join();
    k | troupe::finished_msg;
    sys.stop();
    CHECK(seen.get() == std::vector<std::string>{"keeper|answer|std::runtime_error|after defer"});
}
