// Ask deadlines: ask(actor, request, deadline) fails with request_error
// (timeout) naming the actor and the request; a reply after the deadline is
// dropped, counted and shown in the dump; the reply and the deadline race
// on one claim; a deadline already passed sends nothing; the requester's
// side never frees a request its receiver still holds.
#include <atomic>
#include <chrono>
#include <memory>
#include <regex>
#include <string>

#include "actor_fixture.hpp"
#include "dump_text.hpp"
#include "leak_check.hpp"
#include "troupe/thread.hpp"

using namespace std::chrono_literals;
using troupe_test::contains;
using troupe_test::on_workers;

namespace {

struct get_total : troupe::request<long> {};

// Keeps the request and answers it when told (defer): the test decides when
// the late reply comes, with no timing involved.
struct slow_server : troupe::actor {
    get_total* held = nullptr;
    troupe::future<void> got;
    void receive(get_total& q) {
        q.defer();
        held = &q;
        got.fulfil();
    }
};

// Answers at once.
struct quick_server : troupe::actor {
    std::atomic<long> received{0};
    void receive(get_total& q) {
        received.fetch_add(1, std::memory_order_relaxed);
        q.reply(42);
    }
};

// The dump's count after `label` ("late replies dropped: "), 0 if absent.
long dump_count(const std::string& label) {
    const std::string d = troupe_test::dump_now();
    const std::size_t at = d.find(label);
    if (at == std::string::npos) return 0;
    return std::stol(d.substr(at + label.size()));
}

}  // namespace

TEST_CASE(
    "a deadline fails the ask naming actor and request; the late reply is dropped and "
    "counted") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        slow_server s;
        {
            get_total q;
            auto& f = troupe::ask(s, q, 5ms);
            try {
                (void)f.get();
                FAIL("the ask should have timed out");
            } catch (const troupe::request_error& e) {
                CHECK(e.why() == troupe::request_error::reason::timeout);
                CHECK(contains(e.what(), "slow_server"));
                CHECK(contains(e.what(), "get_total"));
                CHECK(contains(e.what(), "timed out"));
            }
            CHECK(q.expired());
            s.got.get();  // the server holds q now
            CHECK(contains(troupe_test::dump_now(), "asks timed out: 1 (1 still held"));
            s.held->reply(7);  // late: dropped, returns normally
            CHECK(dump_count("late replies dropped: ") == 1);
            CHECK(contains(troupe_test::dump_now(), "asks outstanding: 0"));
        }  // q's destructor: the receiver has let go, nothing to wait for
        s | troupe::finished_msg;
        sys.stop();
    });
}

TEST_CASE("a deadline already passed fails at once and sends nothing") {
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{2};
    quick_server s;
    get_total q;
    auto& f = troupe::ask(s, q, std::chrono::steady_clock::now() - 1s);
    CHECK(f.available());
    try {
        (void)f.get();
        FAIL("the ask should have failed");
    } catch (const troupe::request_error& e) {
        CHECK(e.why() == troupe::request_error::reason::timeout);
        CHECK(contains(e.what(), "already passed"));
        CHECK(contains(e.what(), "quick_server"));
    }
    q.reset();
    CHECK(troupe::ask(s, q, 0ns).available());  // a zero timeout has passed too
    q.reset();
    CHECK(troupe::ask(s, q, 10s).get() == 42);  // the only one received
    CHECK(s.received.load() == 1);
    s | troupe::finished_msg;
    sys.stop();
}

TEST_CASE("a reply racing its deadline reaches exactly one of the reply and the timeout") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        quick_server s;
        const long before = dump_count("late replies dropped: ");
        const int rounds = troupe_test::scaled(4000, 10);
        long values = 0, timeouts = 0;
        for (int i = 0; i < rounds; ++i) {
            get_total q;
            // Deadlines from 0 to ~20 us: both outcomes happen.
            auto& f = troupe::ask(s, q, std::chrono::nanoseconds{(i % 21) * 1000});
            try {
                const long v = f.get();
                CHECK(v == 42);
                ++values;
            } catch (const troupe::request_error& e) {
                CHECK(e.why() == troupe::request_error::reason::timeout);
                ++timeouts;
            }
        }  // each q's destructor waited for its receiver's (late) answer
        CHECK(values + timeouts == rounds);
        // Every timed-out round that was sent got its late reply, dropped;
        // the ones whose deadline had passed before the send were not sent.
        CHECK(dump_count("late replies dropped: ") - before == s.received.load() - values);
        CHECK(s.received.load() <= rounds);
        // The last reply's count drops just after its value is published.
        troupe_test::wait_until(
            [] { return troupe_test::has(troupe_test::dump_now(), "asks outstanding: 0"); });
        s | troupe::finished_msg;
        sys.stop();
    });
}

TEST_CASE("a request freed before any answer waits until its receiver lets go") {
    on_workers([](std::size_t w) {
        troupe_test::leak_check no_leaks;
        troupe::actor_system sys{w};
        slow_server s;
        auto q = std::make_unique<get_total>();
        troupe::ask(s, *q, 1h);
        s.got.get();
        std::atomic<bool> freed{false};
        troupe::thread t{[&] {
            q.reset();  // abandons the round: waits for the server's answer
            freed.store(true);
        }};
        // The abandoned round shows as held by its receiver.
        troupe_test::wait_until([] {
            return troupe_test::has(troupe_test::dump_now(), "still held by their receiver");
        });
        CHECK_FALSE(freed.load());
        s.held->reply(1);  // late: dropped; lets the destructor finish
        t.join();
        CHECK(freed.load());
        s | troupe::finished_msg;
        sys.stop();
    });
}

TEST_CASE("a deadline ask to a finished actor fails as receiver_finished, not as a timeout") {
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{2};
    quick_server s;
    get_total q;
    s | troupe::finished_msg;
    troupe::ask(s, q, 1h);  // after the finish (FIFO): dropped
    try {
        (void)q.result().get();
        FAIL("should fail");
    } catch (const troupe::request_error& e) {
        CHECK(e.why() == troupe::request_error::reason::receiver_finished);
    }
    sys.stop();
}

TEST_CASE("an exception thrown while answering before the deadline reaches the requester") {
    struct thrower : troupe::actor {
        void receive(get_total&) { throw std::runtime_error("broken"); }
    };
    troupe_test::leak_check no_leaks;
    troupe::actor_system sys{2};
    thrower t;
    get_total q;
    CHECK_THROWS_WITH_AS(troupe::ask(t, q, 1h).get(), "broken", std::runtime_error);
    t | troupe::finished_msg;
    sys.stop();
}
