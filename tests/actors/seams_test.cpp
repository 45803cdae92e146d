// The actors rows of the seam matrix: request/ask from every
// context (user thread, OS thread, behaviour) x every seam (a reply, an
// exception from the behaviour, the requester freeing the request at once,
// a forwarded request, allocation failure at each allocation point of the
// send and ask paths). Each row asserts a defined outcome: the right value
// or exception, nothing lost or duplicated, nothing leaked (ASan), no race
// (TSan).
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "actor_fixture.hpp"
#include "alloc_fail.hpp"

using troupe_test::on_workers;

namespace {

// ---------------------------------------------------------------- contexts

enum class context { user_thread, os_thread, behaviour };
constexpr context all_contexts[] = {context::user_thread, context::os_thread, context::behaviour};

const char* name(context c) {
    switch (c) {
    case context::user_thread: return "user thread";
    case context::os_thread: return "OS thread";
    case context::behaviour: return "behaviour";
    }
    return "?";
}

struct run_body : troupe::request<> {
    std::function<void()>* body = nullptr;
};

// Runs a body as its behaviour (on a worker of its own system).
struct runner : troupe::actor {
    explicit runner(troupe::actor_system& s) : troupe::actor(s) {}
    troupe::allocation receive(run_body& r) {
        (*r.body)();
        // The body's sends reach their mailboxes before the caller learns it
        // finished (so the caller's later sends come after them).
        troupe::flush_sends();
        r.reply();
        return troupe::Nodelete;
    }
};

// Runs `f` once in context `c` and waits for it; rethrows what escapes it.
void in_context(context c, std::function<void()> f) {
    std::exception_ptr escaped;
    std::function<void()> body = [&] {
        try {
            f();
        } catch (...) {
            escaped = std::current_exception();
        }
    };
    switch (c) {
    case context::user_thread: {
        troupe::cluster cl{1};
        troupe_test::run_in(cl, body);
        break;
    }
    case context::os_thread: {
        std::thread t{body};
        t.join();
        break;
    }
    case context::behaviour: {
        troupe::actor_system host{1};
        runner r{host};
        run_body q;
        q.body = &body;
        troupe::ask(r, q).get();
        r | troupe::finished_msg;
        host.stop();
        break;
    }
    }
    if (escaped) std::rethrow_exception(escaped);
}

// ---------------------------------------------------------------- actors

struct get_value : troupe::request<long> {
    long operand = 0;
};
struct tick : troupe::message {};

std::atomic<long> live_payloads{0};
struct payload : troupe::message {
    long v;
    explicit payload(long v) : v(v) { ++live_payloads; }
    ~payload() override { --live_payloads; }
};

// Answers get_value with operand * 2; throws for a negative operand
// (before replying: the requester gets the exception). After replying it
// touches only its own state.
struct doubler : troupe::actor {
    doubler() = default;
    explicit doubler(troupe::actor_system& s) : troupe::actor(s) {}
    long answered = 0, ticks = 0, payload_sum = 0;
    troupe::allocation receive(get_value& q) {
        if (q.operand < 0) throw std::domain_error("negative operand");
        q.reply(q.operand * 2);
        ++answered;  // after the reply: the request may be gone already
        return troupe::Nodelete;
    }
    troupe::allocation receive(tick&) {
        ++ticks;
        return troupe::Nodelete;
    }
    troupe::allocation receive(payload& p) {
        payload_sum += p.v;
        return troupe::Nodelete;
    }
};

// Forwards get_value to the next hop (operand + 1 per hop).
struct hop : troupe::actor {
    explicit hop(troupe::actor_system& s) : troupe::actor(s) {}
    troupe::actor* next_hop = nullptr;
    doubler* last = nullptr;
    troupe::allocation receive(get_value& q) {
        q.operand += 1;
        if (last) *last | q;
        else *static_cast<hop*>(next_hop) | q;
        return troupe::Nodelete;
    }
};

// Blocks its worker until released (so a mailbox fills deterministically).
struct hold : troupe::message {
    troupe::future<void>* started = nullptr;
    troupe::future<void>* release = nullptr;
};
struct gate : troupe::actor {
    explicit gate(troupe::actor_system& s) : troupe::actor(s) {}
    troupe::allocation receive(hold& h) {
        h.started->fulfil();
        h.release->get();
        return troupe::Finished;
    }
};

// Holds the only worker of a 1-worker system inside a gate's behaviour
// (so that sends to that system's actors queue up) until release().
struct held_worker {
    gate g;
    troupe::future<void> started, released;
    hold h;
    explicit held_worker(troupe::actor_system& s) : g{s} {
        h.started = &started;
        h.release = &released;
        g | h;
        started.get();  // the only worker is now inside g's behaviour
    }
    void release() { released.fulfil(); }
};

}  // namespace

// ---------------------------------------------------------------- ask

TEST_CASE("seams: ask from every context: value, exception, requester frees the request at once") {
    on_workers([](std::size_t w) {
        troupe::actor_system sys{w};
        doubler d{sys};
        const long n = troupe_test::scaled(200L);
        for (context c : all_contexts) {
            CAPTURE(name(c));
            in_context(c, [&] {
                for (long i = 0; i < n; ++i) {
                    auto q = std::make_unique<get_value>();
                    q->operand = i;
                    const long v = troupe::ask(d, *q).get();
                    q.reset();  // freed while the behaviour may still run
                    if (v != 2 * i) throw std::logic_error("wrong answer");
                }
                get_value bad;
                bad.operand = -1;
                bool threw = false;
                try {
                    troupe::ask(d, bad).get();
                } catch (const std::domain_error&) {
                    threw = true;
                }
                if (!threw)
                    throw std::logic_error("the behaviour's exception did not reach the requester");
            });
        }
        d | troupe::finished_msg;
        sys.stop();
        CHECK(d.answered == 3 * n);  // nothing lost or duplicated
    });
}

TEST_CASE("seams: a request forwarded through several actors, from every context") {
    on_workers([](std::size_t w) {
        troupe::actor_system sys{w};
        doubler d{sys};
        hop h2{sys}, h1{sys};
        h2.last = &d;
        h1.next_hop = &h2;
        const long n = troupe_test::scaled(200L);
        for (context c : all_contexts) {
            CAPTURE(name(c));
            in_context(c, [&] {
                for (long i = 0; i < n; ++i) {
                    auto q = std::make_unique<get_value>();
                    q->operand = i;
                    if (troupe::ask(h1, *q).get() != 2 * (i + 2))
                        throw std::logic_error("wrong answer");
                }
            });
        }
        h1 | troupe::finished_msg;
        h2 | troupe::finished_msg;
        d | troupe::finished_msg;
        sys.stop();
        CHECK(d.answered == 3 * n);
    });
}

// ---------------------------------------------------------------- allocation failure

namespace {

constexpr int sends_per_round = 20;  // the mailbox (16 envelopes) grows once

// What `count` sends with the n-th allocation failing did.
struct send_tally {
    long ok = 0;         // sends that returned
    long failed = 0;     // sends that threw std::bad_alloc
    long sum = 0;        // the payloads of the sends that returned
    bool fired = false;  // whether the n-th allocation came (and failed)
};

// Sends 1..count to `d` (value sends of `payload` when `t` is null, else
// `*t` by reference) with the n-th allocation of the calling context
// failing; counts what returned and what threw.
send_tally send_failing(doubler& d, tick* t, int count, std::size_t n) {
    send_tally r;
    troupe_test::fail_allocation guard{n};
    for (int i = 1; i <= count; ++i) {
        try {
            if (!t) troupe::send<payload>(d, long{i});
            else d | *t;
            ++r.ok;
            r.sum += i;
        } catch (const std::bad_alloc&) {
            ++r.failed;
        }
    }
    r.fired = guard.fired();
    return r;
}

// Once `d`'s system stopped: every send either arrived or threw having
// queued nothing, and exactly one threw iff the allocation failed.
void check_sends(const send_tally& r, const doubler& d, int count, bool value_sends) {
    CHECK(r.ok + r.failed == count);
    CHECK(r.failed == (r.fired ? 1 : 0));
    if (value_sends) {
        CHECK(d.payload_sum == r.sum);     // exactly the sends that returned
        CHECK(live_payloads.load() == 0);  // failed ones freed, delivered ones freed
    } else {
        CHECK(d.ticks == r.ok);
    }
}

// One round: `sender` sends `sends_per_round` ticks to a doubler whose
// worker is held (its mailbox fills), with the n-th allocation of the
// sending context failing. Returns whether an allocation failed; checks
// that every send either queued its message or threw std::bad_alloc having
// queued nothing.
bool send_round(context c, std::size_t n, bool value_sends) {
    troupe::actor_system sys{1};
    held_worker held{sys};
    doubler d{sys};
    auto t = value_sends ? nullptr : std::make_unique<tick>();  // (an unsent one is reported)
    send_tally r;
    in_context(c, [&] { r = send_failing(d, t.get(), sends_per_round, n); });
    held.release();
    d | troupe::finished_msg;
    sys.stop();
    check_sends(r, d, sends_per_round, value_sends);
    return r.fired;
}

}  // namespace

TEST_CASE(
    "seams: allocation failure at each allocation point of a send, from a user thread and an OS "
    "thread") {
    troupe_test::watchdog wd{"send allocation failure"};
    for (context c : {context::user_thread, context::os_thread}) {
        for (bool value_sends : {false, true}) {
            CAPTURE(name(c));
            CAPTURE(value_sends);
            std::size_t n = 1;
            while (send_round(c, n, value_sends)) ++n;
            // a | m: the mailbox growth; send<M>: each new plus the growth.
            CHECK(n - 1 == (value_sends ? sends_per_round + 1 : 1));
        }
    }
}

TEST_CASE("seams: allocation failure at each allocation point of sends from a behaviour") {
    // The behaviour's sends are staged in its worker (8 in flight, then a
    // 16-envelope stage per destination mailbox, which grows once); the
    // stage is handed over when the batch ends.
    troupe_test::watchdog wd{"behaviour send allocation failure"};
    for (bool value_sends : {false, true}) {
        CAPTURE(value_sends);
        std::size_t points = 0;
        for (std::size_t n = 1;; ++n) {
            troupe::actor_system host{1};
            doubler d{host};
            runner r{host};
            auto t =
                value_sends ? nullptr : std::make_unique<tick>();  // (an unsent one is reported)
            send_tally s;
            std::function<void()> body = [&] {
                s = send_failing(d, t.get(), 2 * sends_per_round, n);
            };
            run_body q;
            q.body = &body;
            troupe::ask(r, q).get();
            r | troupe::finished_msg;
            d | troupe::finished_msg;
            host.stop();
            check_sends(s, d, 2 * sends_per_round, value_sends);
            if (!s.fired) break;
            points = n;
        }
        CHECK(points == (value_sends ? 2 * sends_per_round + 1 : 1));
    }
}

TEST_CASE("seams: ask whose send fails to allocate leaves the request unsent and reusable") {
    troupe_test::watchdog wd{"ask allocation failure"};
    for (context c : {context::user_thread, context::os_thread}) {
        CAPTURE(name(c));
        troupe::actor_system sys{1};
        held_worker held{sys};
        doubler d{sys};
        tick t;
        for (int i = 0; i < 16; ++i) d | t;  // d's mailbox is full
        get_value q;
        q.operand = 5;
        bool threw = false;
        in_context(c, [&] {
            troupe_test::fail_allocation guard{1};
            try {
                troupe::ask(d, q);
            } catch (const std::bad_alloc&) {
                threw = true;
            }
        });
        CHECK(threw);
        CHECK_FALSE(q.result().available());
        held.release();
        CHECK(troupe::ask(d, q).get() == 10);  // the same request, sent again
        d | troupe::finished_msg;
        sys.stop();
        CHECK(d.answered == 1);  // the failed ask was not delivered
        CHECK(d.ticks == 16);
    }
}

// ---------------------------------------------------------------- exceptions

TEST_CASE("seams: an exception from an ordinary behaviour, messages sent from every context") {
    struct fragile : troupe::actor {
        explicit fragile(troupe::actor_system& s) : troupe::actor(s) {}
        long got = 0;
        troupe::allocation receive(payload& p) {
            ++got;
            if (p.v % 3 == 0) throw std::runtime_error("multiple of three");
            return troupe::Nodelete;
        }
    };
    on_workers([](std::size_t w) {
        std::atomic<long> handled{0};
        auto cfg = troupe_test::workers(w);
        cfg.on_behaviour_exception = [&](const troupe::behaviour_exception& e) {
            if (e.actor_type == "fragile" && e.message_type == "payload" &&
                e.what == "multiple of three")
                handled.fetch_add(1, std::memory_order_relaxed);
            return troupe::Nodelete;
        };
        troupe::actor_system sys{cfg};
        fragile f{sys};
        for (context c : all_contexts)
            in_context(c, [&] {
                for (long i = 1; i <= 30; ++i) troupe::send<payload>(f, i);
            });
        f | troupe::finished_msg;
        sys.stop();
        CHECK(f.got == 90);                // every message received once
        CHECK(handled.load() == 30);       // every exception handled once
        CHECK(live_payloads.load() == 0);  // thrown-through messages freed too
    });
}

TEST_CASE("seams: flush_sends failing half-way neither loses nor duplicates a behaviour's sends") {
    // The behaviour's 8 pipelined sends go to another system's actor whose
    // mailbox (held by a gate) has room for one more envelope: the first is
    // handed over, the second needs a growth, which fails.
    troupe_test::watchdog wd{"flush_sends allocation failure"};
    troupe::actor_system target_sys{1};
    held_worker held{target_sys};
    doubler d{target_sys};
    tick t;
    for (int i = 0; i < 15; ++i) d | t;
    troupe::actor_system host{1};
    runner r{host};
    bool threw = false;
    std::function<void()> body = [&] {
        for (int i = 0; i < 8; ++i) d | t;  // all in the pipeline
        troupe_test::fail_allocation guard{1};
        try {
            troupe::flush_sends();
        } catch (const std::bad_alloc&) {
            threw = true;
        }
    };
    run_body q;
    q.body = &body;
    troupe::ask(r, q).get();  // the runner's flush (after the guard) hands the rest over
    CHECK(threw);
    held.release();
    r | troupe::finished_msg;
    host.stop();
    d | troupe::finished_msg;
    target_sys.stop();
    CHECK(d.ticks == 15 + 8);  // each send delivered exactly once
}
