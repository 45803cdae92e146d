// The seam matrix for waituntil (every seam has a defined outcome:
// docs/exception-safety.md), at 1, 2 and 4 processors:
// or-mode (exclusive) and and-mode (general) statements, from a user thread
// and an OS thread, across each seam: a registration that throws while an
// earlier clause is queued, a clause body that throws, a channel closed or
// destroyed while a clause waits on it, a timeout racing a completion, and a
// stray unpark of the blocked statement. Each row asserts that nothing is
// lost or duplicated (elements are counted) and that no stray permit is left
// (a later sleep lasts its full length).
#include <atomic>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "alloc_fail.hpp"
#include "fixture.hpp"
#include "seams.hpp"
#include "troupe/channel.hpp"
#include "troupe/thread.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
using troupe::channel;
using troupe::on;
using troupe::waituntil;
using troupe_test::from;
using troupe_test::misuse_recorder;
using troupe_test::on_processors;
using troupe_test::run_from;
using troupe_test::run_in;
using troupe_test::sleeps_fully;
using troupe_test::wait_until;

namespace {

struct registration_failure : std::runtime_error {
    registration_failure() : std::runtime_error("register_select failed") {}
};

// A selectable whose registration throws (after running `before`, which may
// act as a partner racing the statement). Its ready hint is false, so a
// pure-or statement registers it in the second pass, after every channel
// clause that looked unready: those are queued when it throws.
template <class F>
struct throwing_registration {
    F before;
    bool select_ready_hint() const noexcept { return false; }
    bool register_select(troupe::select_node&) {
        before();
        throw registration_failure{};
    }
    bool unregister_select(troupe::select_node&) noexcept { return false; }
    bool on_selected(troupe::select_node&) noexcept { return true; }
};
template <class F>
throwing_registration(F) -> throwing_registration<F>;

// A selectable that never completes and runs `hook` when it is unregistered:
// written first, it is unregistered first, so the hook runs after the
// statement decided and before any other clause left its queue.
template <class F>
struct unregister_hook {
    F hook;
    bool register_select(troupe::select_node&) noexcept { return false; }
    bool unregister_select(troupe::select_node&) {
        hook();
        return false;
    }
    bool on_selected(troupe::select_node&) noexcept { return true; }
};
template <class F>
unregister_hook(F) -> unregister_hook<F>;

auto nothing = [] {};

// A selectable whose registration allocates (as timer_arm may), in the
// second pass of a pure-or statement (its ready hint is false).
// `attempted` is raised just before the allocation.
struct allocating_registration {
    std::atomic<bool>* attempted;
    std::unique_ptr<int> state;
    bool select_ready_hint() const noexcept { return false; }
    bool register_select(troupe::select_node&) {
        attempted->store(true);
        state = std::make_unique<int>(1);
        return false;
    }
    bool unregister_select(troupe::select_node&) noexcept {
        state.reset();
        return false;
    }
    bool on_selected(troupe::select_node&) noexcept { return true; }
};

// Runs `body` as a user thread and then from an OS thread, at each
// processor count of the fixture.
template <class F>
void from_both_contexts(F body) {
    on_processors([&](troupe::cluster& c) {
        for (from where : {from::user_thread, from::os_thread}) {
            CAPTURE(int(where));
            run_from(c, where, body);
        }
    });
}

}  // namespace

// ------------------------------------------- a registration that throws (9.2)

TEST_CASE(
    "or-mode: registration throws, a partner completes a queued clause after the decision: "
    "the element stays in the channel, no stray permit") {
    from_both_contexts([] {
        channel<int> ch{1, "seam"};
        int v = -1;
        bool body = false;
        // The hook is a partner acting after the statement sealed its
        // status and before the channel clause left its queue.
        CHECK_THROWS_AS(waituntil(on(unregister_hook{[&] { ch.insert(42); }}) |
                                  on(ch.remove_into(v), [&] { body = true; }) |
                                  on(throwing_registration{nothing})),
                        registration_failure);
        CHECK_FALSE(body);
        int left = -1;
        REQUIRE(ch.try_remove(left) == troupe::channel_status::success);  // not lost
        CHECK(left == 42);
        CHECK(sleeps_fully());  // no unpark banked by the partner
    });
}

TEST_CASE(
    "or-mode: registration throws after a partner won a queued clause: its body runs, then "
    "the exception propagates") {
    from_both_contexts([] {
        channel<int> ch{1, "seam"};
        int v = -1;
        int bodies = 0;
        // The partner hands 42 to the queued clause (winning the
        // statement) just before the registration throws.
        CHECK_THROWS_AS(waituntil(on(ch.remove_into(v), [&] { ++bodies; }) |
                                  on(throwing_registration{[&] { ch.insert(42); }})),
                        registration_failure);
        CHECK(bodies == 1);
        CHECK(v == 42);
        CHECK(ch.empty());
        CHECK(sleeps_fully());  // its unpark was consumed
    });
}

TEST_CASE(
    "or-mode: registration throws while a partner thread races the queued clause: every "
    "element exactly once") {
    on_processors([](troupe::cluster& c) {
        const int n = troupe_test::scaled(2'000, 4);
        channel<int> ch{1, "race"};
        std::vector<int> seen(n, 0);
        troupe::thread partner{c, [&] {
                                   for (int i = 0; i < n; ++i) ch.insert(i);
                               }};
        run_in(c, [&] {
            int got = 0, throws = 0;
            while (got < n) {
                int v = -1;
                try {
                    waituntil(on(ch.remove_into(v),
                                 [&] {
                                     ++seen[v];
                                     ++got;
                                 }) |
                              on(throwing_registration{nothing}));
                } catch (registration_failure&) {
                    ++throws;
                }
                troupe::this_thread::yield();  // let the partner run (1 processor)
            }
            CHECK(sleeps_fully());
            CHECK(throws >= 0);
        });
        partner.join();
        for (int i = 0; i < n; ++i) CHECK(seen[i] == 1);
        CHECK(ch.empty());
    });
}

// ----------------------------------------------------- a body that throws

TEST_CASE("and-mode: a clause body throws: the other completed clause still runs, nothing lost") {
    from_both_contexts([] {
        channel<int> a{1, "a"}, b{1, "b"};
        a.insert(1);
        b.insert(2);
        int x = 0, y = 0;
        bool b_ran = false;
        CHECK_THROWS_AS(waituntil(on(a.remove_into(x), [&] { throw std::logic_error("body"); }) &
                                  on(b.remove_into(y), [&] { b_ran = true; })),
                        std::logic_error);
        CHECK(x == 1);
        CHECK(y == 2);
        CHECK(b_ran);  // ran before or during cleanup
        CHECK(a.empty());
        CHECK(b.empty());
        CHECK(sleeps_fully());
    });
}

TEST_CASE("or-mode: the winning body throws: exactly its element was taken") {
    on_processors([](troupe::cluster& c) {
        run_in(c, [&] {
            channel<int> a{1, "a"}, b{1, "b"};
            a.insert(1);
            b.insert(2);
            int x = 0, y = 0;
            CHECK_THROWS_AS(
                waituntil(on(a.remove_into(x), [&] { throw std::logic_error("body"); }) |
                          on(b.remove_into(y))),
                std::logic_error);
            CHECK(x == 1);
            CHECK(y == 0);
            CHECK(a.empty());
            CHECK(b.size() == 1);
            CHECK(sleeps_fully());
        });
    });
}

// --------------------------------------------- a stray unpark (hardening)

TEST_CASE("or-mode: a stray unpark does not end a blocked statement") {
    on_processors([](troupe::cluster& c) {
        for (from where : {from::user_thread, from::os_thread}) {
            CAPTURE(int(where));
            misuse_recorder rec;  // checked builds report the stray wake
            channel<int> a{0, "a"}, b{0, "b"};
            std::atomic<troupe::context*> waiter{nullptr};
            int v = -1, w = -1;
            std::size_t index = 99;
            troupe_test::spawned t{
                c, where, [&] {
                    waiter = &troupe::this_context();
                    index = waituntil(on(a.remove_into(v)) | on(b.remove_into(w))).index();
                }};
            wait_until([&] { return a.waiting_consumers() == 1 && b.waiting_consumers() == 1; });
            troupe::unpark(*waiter.load());
            stray_absorbed(
                rec, [&] { return a.waiting_consumers() == 1 && b.waiting_consumers() == 1; });
            b.insert(7);
            t.join();
            CHECK(index == 1);
            CHECK(w == 7);
            CHECK(v == -1);
        }
    });
}

TEST_CASE("and-mode: a stray unpark does not end a blocked statement") {
    on_processors([](troupe::cluster& c) {
        misuse_recorder rec;
        channel<int> a{0, "a"}, b{0, "b"};
        std::atomic<troupe::context*> waiter{nullptr};
        int v = -1, w = -1;
        std::size_t ran = 0;
        std::atomic<bool> a_ran{false};
        troupe::thread t{
            c, [&] {
                waiter = &troupe::this_context();
                ran = waituntil(on(a.remove_into(v), [&] { a_ran = true; }) & on(b.remove_into(w)))
                          .count();
            }};
        wait_until([&] { return a.waiting_consumers() == 1 && b.waiting_consumers() == 1; });
        troupe::unpark(*waiter.load());
        stray_absorbed(rec,
                       [&] { return a.waiting_consumers() == 1 && b.waiting_consumers() == 1; });
        // The first completion must wake the statement by itself (a stray
        // wake that cost an extra pass would leave the counter one short).
        a.insert(1);
        wait_until([&] { return a_ran.load(); });
        b.insert(2);
        t.join();
        CHECK(ran == 2);
        CHECK(v == 1);
        CHECK(w == 2);
    });
}

// --------------------------- a channel destroyed while a clause waits (9.3)

TEST_CASE(
    "or-mode: destroying a channel a statement waits on releases it with channel_destroyed "
    "(every clause form) and the clause never touches the freed channel") {
    on_processors([](troupe::cluster& c) {
        for (from where : {from::user_thread, from::os_thread})
            for (int form = 0; form < 3; ++form) {  // throwing, report_close, `ok`
                CAPTURE(int(where));
                CAPTURE(form);
                misuse_recorder rec;
                auto doomed = std::make_unique<channel<int>>(0, "doomed");
                channel<int> other{0, "other"};
                const void* address = doomed.get();
                std::atomic<bool> closed{false};
                std::string what;
                troupe::thread killer{
                    c, [&] {
                        wait_until([&] { return doomed->waiting_consumers() == 1; });
                        doomed.reset();
                    }};
                run_from(c, where, [&] {
                    int v = -1, w = -1;
                    bool ok = true;
                    try {
                        if (form == 0)
                            waituntil(on(doomed->remove_into(v)) | on(other.remove_into(w)));
                        else if (form == 1)
                            waituntil(on(doomed->remove_into(v, troupe::report_close)) |
                                      on(other.remove_into(w)));
                        else waituntil(on(doomed->remove_into(v, ok)) | on(other.remove_into(w)));
                    } catch (troupe::channel_destroyed& e) {
                        closed = e.channel() == address;
                        what = e.what();
                    }
                });
                killer.join();
                CHECK(closed);
                CHECK(what.find("'doomed'") != std::string::npos);
                CHECK(other.waiting_consumers() == 0);
                if constexpr (troupe::checked_build) CHECK(rec.messages().size() == 1);
            }
    });
}

TEST_CASE("or-mode: a channel destroyed while a lost clause is still queued on it") {
    on_processors([](troupe::cluster& c) {
        run_in(c, [&] {
            misuse_recorder rec;
            auto doomed = std::make_unique<channel<int>>(0, "doomed");
            channel<int> winner{1, "winner"};
            int v = -1, w = -1;
            troupe::thread partner{c, [&] {
                                       wait_until([&] { return winner.waiting_consumers() == 1; });
                                       winner.insert(5);
                                   }};
            // `winner` wins; while the losers leave, the hook destroys
            // `doomed`, whose clause is still queued there (stale).
            const auto r = waituntil(on(unregister_hook{[&] { doomed.reset(); }}) |
                                     on(doomed->remove_into(v)) | on(winner.remove_into(w)));
            partner.join();
            CHECK(r.index() == 2);
            CHECK(w == 5);
            CHECK(v == -1);
            if constexpr (troupe::checked_build) CHECK(rec.messages().empty());  // no live waiter
        });
    });
}

TEST_CASE(
    "and-mode: a body destroys another clause's channel: that clause ends with "
    "channel_destroyed, nothing touches the freed channel") {
    on_processors([](troupe::cluster& c) {
        run_in(c, [&] {
            misuse_recorder rec;
            auto doomed = std::make_unique<channel<int>>(0, "doomed");
            channel<int> ready{1, "ready"};
            ready.insert(3);
            int v = -1, w = -1;
            bool closed = false;
            try {
                waituntil(on(doomed->remove_into(v)) &
                          on(ready.remove_into(w), [&] { doomed.reset(); }));
            } catch (troupe::channel_destroyed& e) {
                closed = e.name() == "doomed";
            }
            CHECK(closed);
            CHECK(w == 3);
            CHECK(sleeps_fully());
        });
    });
}

TEST_CASE(
    "a channel destroyed right after a partner completed a select clause on it (the "
    "clause unregisters concurrently): every value once, no use after free") {
    on_processors([](troupe::cluster& c) {
        const int rounds = troupe_test::scaled(1'000, 4);
        int received = 0;
        for (int i = 0; i < rounds; ++i) {
            auto a = std::make_unique<channel<int>>(0, "a");
            auto b = std::make_unique<channel<int>>(0, "b");
            int v = -1, w = -1;
            troupe::thread waiter{c, [&] {
                                      const auto r =
                                          waituntil(on(a->remove_into(v)) | on(b->remove_into(w)));
                                      received += r.index() == 0 ? v == i : w == i;
                                  }};
            // Once both clauses are queued, insert into one, then destroy
            // both at once: the waiter may be anywhere in its unregistering.
            wait_until([&] { return a->waiting_consumers() == 1 && b->waiting_consumers() == 1; });
            if (i % 2) a->insert(i);
            else b->insert(i);
            a.reset();
            b.reset();
            waiter.join();
        }
        CHECK(received == rounds);
    });
}

// ---------------------------------------------- a timeout racing completion

TEST_CASE("or-mode: a timeout racing a partner: every element exactly once, no stray permit") {
    on_processors([](troupe::cluster& c) {
        const int n = troupe_test::scaled(1'000, 4);
        for (from where : {from::user_thread, from::os_thread}) {
            CAPTURE(int(where));
            channel<int> ch{0, "race"};
            std::vector<int> seen(n, 0);
            troupe::thread partner{c, [&] {
                                       for (int i = 0; i < n; ++i) ch.insert(i);
                                   }};
            run_from(c, where, [&] {
                int got = 0, timeouts = 0;
                while (got < n) {
                    int v = -1;
                    const auto r = waituntil(on(ch.remove_into(v)) | on(troupe::timeout(20us)));
                    if (r.index() == 0) {
                        ++seen[v];
                        ++got;
                    } else {
                        ++timeouts;
                    }
                }
                CHECK(sleeps_fully());
                CHECK(timeouts >= 0);
            });
            partner.join();
            for (int i = 0; i < n; ++i) CHECK(seen[i] == 1);
        }
    });
}

TEST_CASE("and-mode: a timeout racing a partner: the element is never lost") {
    on_processors([](troupe::cluster& c) {
        const int n = troupe_test::scaled(500, 4);
        channel<int> ch{0, "race"};
        std::vector<int> seen(n, 0);
        troupe::thread partner{c, [&] {
                                   for (int i = 0; i < n; ++i) ch.insert(i);
                               }};
        run_in(c, [&] {
            int got = 0;
            while (got < n) {
                int v = -1;
                // Both must happen: the timeout always does; the remove too.
                waituntil(on(ch.remove_into(v),
                             [&] {
                                 ++seen[v];
                                 ++got;
                             }) &
                          on(troupe::timeout(10us)));
            }
            CHECK(sleeps_fully());
        });
        partner.join();
        for (int i = 0; i < n; ++i) CHECK(seen[i] == 1);
    });
}

// ---------------------------------------------------- allocation failure

TEST_CASE(
    "or-mode: a timeout registration whose allocation fails while a partner races the "
    "queued channel clause: nothing lost, no stray permit") {
    on_processors([](troupe::cluster& c) {
        run_in(c, [&] {
            std::size_t points = 0;
            for (std::size_t n = 1;; ++n) {
                channel<int> ch{0, "alloc"};  // rendezvous: its clause registers (and queues) first
                int v = -1;
                bool body = false, threw = false, fired = false;
                std::atomic<bool> attempted{false};
                // The partner races the last registration (and its failure).
                troupe::thread partner{c, [&] {
                                           wait_until([&] { return attempted.load(); });
                                           ch.insert(42);
                                       }};
                {
                    troupe_test::fail_allocation guard{n};
                    try {
                        waituntil(on(ch.remove_into(v), [&] { body = true; }) |
                                  on(troupe::timeout(10s)) |
                                  on(allocating_registration{&attempted, nullptr}));
                    } catch (std::bad_alloc&) {
                        threw = true;
                    }
                    fired = guard.fired();
                }
                attempted = true;  // (if the statement never got that far)
                if (!body)
                    CHECK(ch.remove() == 42);  // the partner's element was not taken: still there
                else CHECK(v == 42);
                partner.join();
                CHECK(threw == fired);
                CHECK(sleeps_fully());
                if (!fired) break;
                ++points;
            }
            CHECK(points >= 1);  // allocating_registration's (timer_arm's when its heap grows)
        });
    });
}

TEST_CASE(
    "a run-time-length clause whose node allocation fails: nothing registered, nothing "
    "lost") {
    on_processors([](troupe::cluster& c) {
        run_in(c, [&] {
            std::vector<std::unique_ptr<channel<int>>> chans;
            for (std::size_t i = 0; i < troupe::defaults::waituntil::waituntil_range_slots + 2; ++i)
                chans.push_back(std::make_unique<channel<int>>(1, "range"));
            chans.back()->insert(5);
            int v = -1;
            const std::size_t points = troupe_test::for_each_allocation_failure([&](std::size_t) {
                v = -1;
                try {
                    waituntil(troupe::on_any(
                        chans, [&](auto& p) { return p->remove_into(v); },
                        [&](std::size_t i) { CHECK(i == chans.size() - 1); }));
                } catch (std::bad_alloc&) {
                    CHECK(v == -1);
                    CHECK(chans.back()->size() == 1);                // not taken
                    CHECK(chans.front()->waiting_consumers() == 0);  // nothing left queued
                    throw;
                }
                CHECK(v == 5);
                chans.back()->insert(5);
            });
            CHECK(points >= 1);  // the node buffer beyond the inline slots
            CHECK(sleeps_fully());
        });
    });
}
