// waituntil statement semantics, single-threaded where the outcome must be
// exact: otherwise (Cforall's basic_else), and/or/parenthesised predicates
// over every combination of ready futures, guards, evaluation exactly once,
// written-order priority, the fair rotation, the result, a user-defined
// selectable type, and no heap allocation.
#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "alloc_fail.hpp"
#include "fixture.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

// Some statements below mix | and & without parentheses on purpose (the
// precedence is part of what is tested); GCC suggests parentheses there.
#pragma GCC diagnostic ignored "-Wparentheses"

using namespace std::chrono_literals;
using troupe::future;
using troupe::on;
using troupe::otherwise;
using troupe::waituntil;
using troupe::when;
using troupe_test::on_processors;
using troupe_test::run_in;

namespace {

// Three futures with a given readiness pattern (bit i: future i fulfilled).
struct three {
    future<int> a, b, c;
    explicit three(unsigned ready) {
        if (ready & 1) a.fulfil(1);
        if (ready & 2) b.fulfil(2);
        if (ready & 4) c.fulfil(3);
    }
};

// A user-defined selectable: a one-shot flag that a thread raises. It keeps
// one waiting node (enough for a single selector) and implements the select
// protocol with the core rules: win the node before acting, wake last.
class flag {
public:
    void raise() {
        lock_.lock();
        raised_ = true;
        troupe::select_node* n = waiting_ && waiting_->try_claim() ? waiting_ : nullptr;
        waiting_ = nullptr;
        lock_.unlock();
        if (n) n->wake();
    }
    bool register_select(troupe::select_node& n) {
        lock_.lock();
        bool now = false;
        if (raised_) now = n.try_claim();
        else waiting_ = &n;
        lock_.unlock();
        return now;
    }
    bool unregister_select(troupe::select_node& n) {
        lock_.lock();
        if (waiting_ == &n) waiting_ = nullptr;
        lock_.unlock();
        return false;
    }
    bool on_selected(troupe::select_node&) { return true; }

private:
    troupe::spinlock lock_;
    bool raised_ = false;
    troupe::select_node* waiting_ = nullptr;
};
static_assert(troupe::selectable<flag>);

// A selectable that is always ready, counts its registrations, and gives a
// configurable (possibly wrong) ready hint.
class counted {
public:
    explicit counted(bool ready, bool hint) : ready_(ready), hint_(hint) {}
    bool select_ready_hint() const noexcept { return hint_; }
    bool register_select(troupe::select_node& n) {
        ++registrations;
        return ready_ && n.try_claim();
    }
    bool unregister_select(troupe::select_node&) { return false; }
    bool on_selected(troupe::select_node&) { return true; }
    int registrations = 0;

private:
    bool ready_, hint_;
};
static_assert(troupe::selectable<counted>);

}  // namespace

TEST_CASE("otherwise runs only when nothing is ready (Cforall basic_else)") {
    future<int> A;
    std::string out;
    auto step = [&](auto&& r, const char* tag) {
        if (r.otherwise_ran()) out += "else";
        if (r.ran(0)) out += "A";
        out += tag;
        out += ' ';
    };
    step(waituntil(on(A, [] {}), otherwise([] {})), "1");
    A.fulfil(2);
    step(waituntil(on(A, [] {}), otherwise([] {})), "2");
    A.reset();
    step(waituntil(on(A, [] {}), when(true, otherwise([] {}))), "3");
    A.fulfil(4);
    step(waituntil(on(A, [] {}), when(false, otherwise([] {}))), "4");
    A.reset();
    A.fulfil(5);
    step(waituntil(on(A, [] {})), "5");
    CHECK(out == "else1 A2 else3 A4 A5 ");
    CHECK(A.waiters() == 0);
}

TEST_CASE("pure or: exactly one body, the first ready in written order") {
    for (unsigned ready = 1; ready < 8; ++ready) {
        CAPTURE(ready);
        three f{ready};
        int runs = 0, which = -1;
        auto r =
            waituntil(on(f.a, [&] { ++runs, which = 0; }) | on(f.b, [&] { ++runs, which = 1; }) |
                      on(f.c, [&] { ++runs, which = 2; }));
        CHECK(runs == 1);
        const int first = (ready & 1) ? 0 : (ready & 2) ? 1 : 2;
        CHECK(which == first);
        CHECK(r.index() == std::size_t(first));
        CHECK(r.count() == 1);
        CHECK(f.a.waiters() + f.b.waiters() + f.c.waiters() == 0);
    }
}

TEST_CASE("and / or / parenthesised predicates over every combination of ready futures") {
    // With otherwise, the statement never blocks: the bodies that run are
    // exactly those of ready futures met before the predicate holds, and the
    // otherwise runs iff the predicate cannot hold with what is ready.
    for (unsigned ready = 0; ready < 8; ++ready) {
        CAPTURE(ready);
        const bool a = ready & 1, b = ready & 2, c = ready & 4;
        {  // a & b & c
            three f{ready};
            auto r = waituntil(on(f.a) & on(f.b) & on(f.c), otherwise([] {}));
            CHECK(r.otherwise_ran() == !(a && b && c));
            CHECK(r.ran(0) == a);
            CHECK(r.ran(1) == b);
            CHECK(r.ran(2) == c);
        }
        {  // a | b & c  ==  a | (b & c)
            three f{ready};
            auto r = waituntil(on(f.a) | on(f.b) & on(f.c), otherwise([] {}));
            const bool sat = a || (b && c);
            CHECK(r.otherwise_ran() == !sat);
            CHECK(r.ran(0) == a);
            // Checked in order, stopping once the predicate holds.
            CHECK(r.ran(1) == (b && !a));
            CHECK(r.ran(2) == (c && !a));
        }
        {  // (a | b) & c
            three f{ready};
            auto r = waituntil((on(f.a) | on(f.b)) & on(f.c), otherwise([] {}));
            const bool sat = (a || b) && c;
            CHECK(r.otherwise_ran() == !sat);
            // Both a and b run when ready: c has not run when b is checked.
            CHECK(r.ran(0) == a);
            CHECK(r.ran(1) == b);
            CHECK(r.ran(2) == c);
        }
        {  // a & b | c
            three f{ready};
            auto r = waituntil(on(f.a) & on(f.b) | on(f.c), otherwise([] {}));
            const bool sat = (a && b) || c;
            CHECK(r.otherwise_ran() == !sat);
            CHECK(r.ran(0) == a);
            CHECK(r.ran(1) == b);
            CHECK(r.ran(2) == (c && !(a && b)));
        }
    }
}

TEST_CASE("blocking and/or predicates complete for every order of fulfilment") {
    on_processors(
        [](troupe::cluster& c) {
            // Every subset is fulfilled before the statement; the rest by a
            // thread racing it. The statement must end with the predicate true.
            for (unsigned pre = 0; pre < 8; ++pre) {
                three f{pre};
                troupe::thread server{c, [&] {
                                          if (!(pre & 1)) f.a.fulfil(1);
                                          troupe::this_thread::yield();
                                          if (!(pre & 2)) f.b.fulfil(2);
                                          if (!(pre & 4)) f.c.fulfil(3);
                                      }};
                bool ra = false, rb = false, rc = false;
                run_in(c, [&] {
                    waituntil((on(f.a, [&] { ra = true; }) | on(f.b, [&] { rb = true; })) &
                              on(f.c, [&] { rc = true; }));
                });
                CHECK(((ra || rb) && rc));
                ra = rb = rc = false;
                run_in(c, [&] {
                    waituntil(on(f.a, [&] { ra = true; }) & on(f.b, [&] { rb = true; }) &
                              on(f.c, [&] { rc = true; }));
                });
                CHECK((ra && rb && rc));
                server.join();
                CHECK(f.a.waiters() + f.b.waiters() + f.c.waiters() == 0);
            }
        },
        {1, 2});
}

TEST_CASE("guards: all false does nothing (not even otherwise); mixed drop clauses") {
    three f{7};
    int runs = 0;
    auto r =
        waituntil(when(false, on(f.a, [&] { ++runs; })) | when(false, on(f.b, [&] { ++runs; })),
                  otherwise([&] { ++runs; }));
    CHECK(runs == 0);
    CHECK(r.none());

    auto r2 = waituntil(when(false, on(f.a) & on(f.b)) & when(false, on(f.c)));
    CHECK(r2.none());

    // A disabled clause under & is true: a & (disabled b) needs only a.
    future<int> never;
    auto r3 = waituntil(on(f.a) & when(false, on(never)));
    CHECK(r3.ran(0));
    CHECK_FALSE(r3.ran(1));
    CHECK(never.waiters() == 0);

    // Under | it is false: (disabled a) | c runs c although a is ready.
    auto r4 = waituntil(when(false, on(f.a)) | on(f.c));
    CHECK(r4.index() == 1);

    // A whole disabled &-subtree under | drops out instead of being true.
    auto r5 = waituntil(when(false, on(never) & on(never)) | on(f.b));
    CHECK(r5.index() == 2);

    // The thesis's example: A | when(false) B & C is A | C (a disabled
    // clause goes with its operator).
    future<int> empty;
    auto r6 = waituntil(when(true, on(empty)) | when(false, on(f.b)) & on(f.c));
    CHECK(r6.ran(2));
    CHECK(empty.waiters() == 0);
}

TEST_CASE("targets and guards are evaluated exactly once, before registration") {
    three f{2};
    int targets = 0, guards = 0;
    auto target = [&](future<int>& x) -> future<int>& {
        ++targets;
        return x;
    };
    auto guard = [&](bool g) {
        ++guards;
        return g;
    };
    waituntil(when(guard(true), on(target(f.a))) | when(guard(true), on(target(f.b))) |
                  when(guard(false), on(target(f.c))),
              when(guard(true), otherwise([] {})));
    CHECK(targets == 3);
    CHECK(guards == 4);
}

TEST_CASE("fair mode rotates the starting clause; written order otherwise") {
    three f{7};
    std::vector<std::size_t> plain, fair;
    for (int i = 0; i < 6; ++i) plain.push_back(waituntil(on(f.a) | on(f.b) | on(f.c)).index());
    troupe::rotation rot;
    for (int i = 0; i < 6; ++i) fair.push_back(waituntil(rot, on(f.a) | on(f.b) | on(f.c)).index());
    CHECK(plain == std::vector<std::size_t>{0, 0, 0, 0, 0, 0});
    CHECK(fair == std::vector<std::size_t>{0, 1, 2, 0, 1, 2});
    // Fair mode with a guard: a disabled clause is skipped, not starved into.
    std::vector<std::size_t> guarded;
    for (int i = 0; i < 3; ++i)
        guarded.push_back(waituntil(rot, on(f.a) | when(false, on(f.b)) | on(f.c)).index());
    CHECK(guarded == std::vector<std::size_t>{0, 2, 2});
}

TEST_CASE("a user-defined selectable type is a clause like any other") {
    on_processors([](troupe::cluster& c) {
        for (int i = 0; i < 50; ++i) {
            flag fl;
            future<int> never;
            troupe::thread raiser{c, [&] { fl.raise(); }};
            std::size_t idx = 99;
            run_in(c, [&] { idx = waituntil(on(never) | on(fl)).index(); });
            CHECK(idx == 1);
            raiser.join();
        }
    });
}

TEST_CASE("semaphore clauses: an and-statement takes exactly one unit each") {
    troupe::semaphore s1{1}, s2{0};
    int ran = 0;
    troupe::thread t{[&] { s2.release(); }};
    waituntil(on(s1, [&] { ++ran; }) & on(s2, [&] { ++ran; }));
    t.join();
    CHECK(ran == 2);
    CHECK(s1.count() == 0);
    CHECK(s2.count() == 0);
}

TEST_CASE("no heap allocation: ready statements of every shape") {
    three f{7};
    troupe::semaphore s{100};
    future<int> never;
    int sink = 0;
    std::size_t allocations = 0;
    {
        // Counts this thread's allocations (the injector never reaches its
        // failure point at this n).
        troupe_test::fail_allocation count{~std::size_t{0}};
        for (int i = 0; i < 100; ++i) {
            waituntil(on(f.a, [&] { ++sink; }) | on(f.b) | on(s));
            waituntil(on(f.a, [&] { ++sink; }) & (on(f.b) | on(never)), otherwise([] {}));
            waituntil(on(never) | on(troupe::timeout(0ns)));
            waituntil(on(never), otherwise([&] { ++sink; }));
        }
        allocations = count.seen();
    }
    CHECK(allocations == 0);
    CHECK(sink == 300);
}

TEST_CASE("ready hints: unready clauses are not registered when a later one is ready") {
    counted a{false, false}, b{false, false}, c{true, true};
    CHECK(waituntil(on(a) | on(b) | on(c)).index() == 2);
    CHECK(a.registrations == 0);
    CHECK(b.registrations == 0);
    CHECK(c.registrations == 1);
    // A wrong "not ready" guess only delays the clause to the second pass.
    counted wrong{true, false}, unready{false, true};
    CHECK(waituntil(on(wrong) | on(unready)).index() == 0);
    CHECK(unready.registrations == 1);
    CHECK(wrong.registrations == 1);
    // All hinted, none looks ready, otherwise enabled: a pure poll, nothing
    // is registered.
    counted x{false, false}, y{false, false};
    CHECK(waituntil(on(x) | on(y), otherwise([] {})).otherwise_ran());
    CHECK(x.registrations + y.registrations == 0);
    // A clause without a hint is still registered, so the others are too.
    future<int> empty;
    CHECK(waituntil(on(x) | on(empty), otherwise([] {})).otherwise_ran());
    CHECK(x.registrations == 1);
    // Clauses without hints keep written order.
    future<int> ready;
    ready.fulfil(1);
    counted late{true, true};
    CHECK(waituntil(on(ready) | on(late)).index() == 0);
    CHECK(late.registrations == 0);
}

TEST_CASE("an exception in a body with & pending semaphore units loses no unit") {
    for (int round = 0; round < 3; ++round) {
        troupe::semaphore s1{1}, s2{1};
        bool second_ran = false;
        // Both units are taken at registration; the first body throws; the
        // second clause's unit was taken, so its body runs during cleanup.
        CHECK_THROWS_AS(waituntil(on(s1, [] { throw std::runtime_error("body"); }) &
                                  on(s2, [&] { second_ran = true; })),
                        std::runtime_error);
        CHECK(second_ran);
        CHECK(s1.count() + s2.count() == 0);
    }
    // A pending body's own exception propagates after the others ran.
    troupe::semaphore s1{1}, s2{1}, s3{1};
    int ran = 0;
    troupe::future<int> never;
    CHECK_THROWS_AS(waituntil(on(s1, [&] { ++ran; }) |
                              (on(never) & on(s2, [] { throw std::logic_error("x"); })) |
                              on(s3, [&] { ++ran; })),
                    std::logic_error);
    CHECK(ran == 2);  // s1 in the check pass, s3 during cleanup
    CHECK(s1.count() + s2.count() + s3.count() == 0);
}
