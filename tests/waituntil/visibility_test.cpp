// A clause body runs once its operation is done, and sees it done: a
// future's body sees available() (fulfil publishes the state before it
// wakes select waiters), a lock clause's body holds the lock,
// a semaphore clause's body runs after the releaser published the count.
// Every statement shape over futures (or, and, guarded, run-time ranges,
// with a timeout clause), from user threads and from an OS thread, with a
// server on another processor completing the resources concurrently.
#include <array>
#include <atomic>
#include <span>

#include "fixture.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using troupe::future;
using troupe::on;
using troupe::on_any;
using troupe::waituntil;
using troupe::when;
using troupe_test::run_in;

namespace {

constexpr int rounds = troupe_test::scaled(200, 20);

// Bodies that ran while their future still said "not available".
struct seen {
    int bodies = 0;
    int not_ready = 0;
    void check(const future<int>& f) {
        ++bodies;
        if (!f.available()) ++not_ready;
    }
};

// The eight statement shapes of the reproducer, by number; each
// runs until all three bodies have run. `guards` enables clauses (bit i:
// clause i) for the guarded shapes.
void run_shape(int shape, unsigned guards, future<int>& A, future<int>& B, future<int>& C,
               seen& s) {
    bool ra = false, rb = false, rc = false;
    const bool ga = guards & 1, gb = guards & 2, gc = guards & 4;
    auto body = [&](future<int>& f, bool& ran) {
        return [&] {
            s.check(f);
            ran = true;
        };
    };
    const auto hour = std::chrono::hours(1);
    std::array<future<int>*, 3> all{&A, &B, &C};
    for (int guard = 0; guard < 100 && !((ra || !ga) && (rb || !gb) && (rc || !gc)); ++guard) {
        switch (shape) {
        case 0:
            waituntil(when(!ra, on(A, body(A, ra))) | when(!rb, on(B, body(B, rb))) |
                      when(!rc, on(C, body(C, rc))));
            break;
        case 1:
            waituntil(when(!ra, on(A, body(A, ra))) |
                      (when(!rb, on(B, body(B, rb))) & when(!rc, on(C, body(C, rc)))));
            break;
        case 2:
            waituntil(when(ga && !ra, on(A, body(A, ra))) |
                      (when(gb && !rb, on(B, body(B, rb))) & when(gc && !rc, on(C, body(C, rc)))));
            break;
        case 3:
            waituntil((when(ga && !ra, on(A, body(A, ra))) | when(gb && !rb, on(B, body(B, rb)))) &
                      when(gc && !rc, on(C, body(C, rc))));
            break;
        case 4:  // with a timeout clause that never fires
            waituntil(when(!ra, on(A, body(A, ra))) | when(!rb, on(B, body(B, rb))) |
                      when(!rc, on(C, body(C, rc))) | on(troupe::timeout(hour)));
            break;
        case 5:  // an and with a timeout beside it
            waituntil((when(!ra, on(A, body(A, ra))) & when(!rb, on(B, body(B, rb))) &
                       when(!rc, on(C, body(C, rc)))) |
                      on(troupe::timeout(hour)));
            break;
        case 6:  // a run-time-length clause over the three
        case 7:  // the same inside an and with a ready future
        {
            bool* ran[3] = {&ra, &rb, &rc};
            auto range_body = [&](std::size_t i) {
                s.check(*all[i]);
                *ran[i] = true;
            };
            // Futures whose body ran are left out by a shorter span: the
            // unfulfilled ones come first once the ran ones are rotated out.
            std::array<future<int>*, 3> left{};
            std::size_t n = 0;
            for (std::size_t i = 0; i < 3; ++i)
                if (!*ran[i]) left[n++] = all[i];
            auto proj = [](future<int>* f) -> future<int>& { return *f; };
            auto mapped = [&](std::size_t k) {
                for (std::size_t i = 0; i < 3; ++i)
                    if (all[i] == left[k]) range_body(i);
            };
            if (shape == 6) {
                waituntil(on_any(std::span{left.data(), n}, proj, mapped));
            } else {
                future<int> ready;
                ready.fulfil(0);
                waituntil(on_any(std::span{left.data(), n}, proj, mapped) & on(ready));
            }
            break;
        }
        }
    }
    CHECK(((ra || !ga) && (rb || !gb) && (rc || !gc)));
}

// One round: a server on the cluster fulfils B, A, C while `waiter` runs the
// statements of `shape` until every enabled body ran.
template <class Waiter>
void round(troupe::cluster& c, int shape, unsigned guards, seen& s, Waiter&& waiter) {
    future<int> A, B, C;
    troupe::thread server{c, [&] {
                              B.fulfil(2);
                              A.fulfil(1);
                              C.fulfil(3);
                          }};
    waiter([&] { run_shape(shape, guards, A, B, C, s); });
    server.join();
    A.reset(), B.reset(), C.reset();
}

}  // namespace

// Every shape (the guarded ones under all eight guard sets), `rounds`
// rounds each; `waiter(f)` runs f where the statements should run.
template <class Waiter>
void every_shape(troupe::cluster& c, Waiter&& waiter) {
    for (int shape = 0; shape < 8; ++shape) {
        const unsigned guard_sets = (shape == 2 || shape == 3) ? 8 : 1;
        for (unsigned g = 0; g < guard_sets; ++g) {
            CAPTURE(shape);
            CAPTURE(g);
            const unsigned guards = guard_sets == 8 ? g : 7u;
            seen s;
            for (int r = 0; r < rounds; ++r) round(c, shape, guards, s, waiter);
            if (guards != 0) CHECK(s.bodies > 0);
            CHECK(s.not_ready == 0);
        }
    }
}

TEST_CASE("a future clause's body sees its future available, every shape, user threads") {
    troupe_test::watchdog w{"future bodies, user threads"};
    troupe::cluster c{2};
    every_shape(c, [&](auto&& f) { run_in(c, f); });
}

TEST_CASE("a future clause's body sees its future available, every shape, an OS thread") {
    troupe_test::watchdog w{"future bodies, OS thread"};
    troupe::cluster c{2};
    every_shape(c, [](auto&& f) { f(); });
}

TEST_CASE("a lock clause's body holds the lock handed to it") {
    troupe_test::watchdog w{"lock bodies"};
    troupe::cluster c{2};
    int not_owned = 0, bodies = 0;
    for (int r = 0; r < rounds; ++r) {
        troupe::blocking_lock lk;
        future<int> never, go;
        std::atomic<bool> holding{false};
        // The holder takes the lock, then releases it once the waiter is
        // queued on it (or has registered on both clauses), handing it to
        // the waiter's clause.
        troupe::thread holder{c, [&] {
                                  lk.lock();
                                  holding.store(true);
                                  troupe_test::wait_until([&] { return lk.waiters() > 0; });
                                  lk.unlock();
                                  go.fulfil(1);
                              }};
        troupe_test::wait_until([&] { return holding.load(); });
        waituntil((on(lk,
                      [&] {
                          ++bodies;
                          if (!lk.owned_by_caller()) ++not_owned;
                      }) &
                   on(go)) |
                  on(never));
        // The clause held the lock only while its body ran.
        CHECK_FALSE(lk.owned_by_caller());
        holder.join();
    }
    CHECK(bodies == rounds);
    CHECK(not_owned == 0);
}

TEST_CASE("a semaphore clause's body sees the count its release left") {
    troupe_test::watchdog w{"semaphore bodies"};
    troupe::cluster c{2};
    auto run = [&](auto&& waiter) {
        int bad = 0, bodies = 0;
        for (int r = 0; r < rounds; ++r) {
            std::array<troupe::semaphore, 3> sems;
            // release(2): one unit completes the waiter's clause, the other
            // must be in the count when the clause's body runs.
            troupe::thread releaser{c, [&] {
                                        sems[1].release(2);
                                        sems[0].release(2);
                                        sems[2].release(2);
                                    }};
            waiter([&] {
                bool ran[3] = {false, false, false};
                auto body = [&](int i) {
                    return [&, i] {
                        ++bodies;
                        ran[i] = true;
                        if (sems[std::size_t(i)].count() != 1) ++bad;
                    };
                };
                while (!(ran[0] && ran[1] && ran[2]))
                    waituntil(when(!ran[0], on(sems[0], body(0))) &
                              when(!ran[1], on(sems[1], body(1))) &
                              when(!ran[2], on(sems[2], body(2))));
            });
            releaser.join();
            for (auto& s : sems) CHECK(s.count() == 1);
        }
        CHECK(bodies == 3 * rounds);
        CHECK(bad == 0);
    };
    run([&](auto&& f) { run_in(c, f); });
    run([](auto&& f) { f(); });
}
