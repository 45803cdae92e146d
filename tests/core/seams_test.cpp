// The seam matrix for core's blocking primitives (docs/exception-safety.md): lock,
// condition wait (morphing and not) and timed wait, semaphore acquire and
// future get, each from a user thread and from an OS thread, at 1, 2 and 4
// processors, across each seam: a stray unpark, parking inside a catch
// handler and while an exception unwinds, an exception from the code run
// under the primitive, allocation failure at every allocation point, and a
// timeout racing completion. Each row asserts a defined outcome.
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "alloc_fail.hpp"
#include "fixture.hpp"
#include "troupe/blocking_lock.hpp"
#include "troupe/condition_variable.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"

using namespace std::chrono_literals;
using troupe_test::on_processors;
using steady = std::chrono::steady_clock;

namespace {

// ---------------------------------------------------------------- the operations
// Each blocking operation of the matrix. The main thread calls `arm()` so
// that `wait()` blocks, polls `queued()` until the waiter is queued, and
// calls `complete()` to let it return. `wait()` leaves nothing held.
// `kind` is how misuse reports name the primitive.

struct lock_op {
    static constexpr const char* kind = "blocking_lock";
    troupe::blocking_lock l{"seam"};
    void arm() { l.lock(); }
    void wait() {
        l.lock();
        l.unlock();
    }
    bool queued() { return l.waiters() == 1; }
    void complete() { l.unlock(); }
};

struct owner_lock_op {
    static constexpr const char* kind = "owner_lock";
    troupe::owner_lock l{"seam"};
    void arm() { l.lock(); }
    void wait() {
        l.lock();
        l.lock();  // recursion after a hand-off
        l.unlock();
        l.unlock();
    }
    bool queued() { return l.waiters() == 1; }
    void complete() { l.unlock(); }
};

template <class Lock, bool Timed>
struct cv_op {
    static constexpr const char* kind = "condition_variable";
    Lock l;
    troupe::condition_variable cv;
    bool ready = false;  // under l
    bool timed_out = false;
    void arm() {
        std::lock_guard g{l};
        ready = false;
    }
    void wait() {
        std::lock_guard g{l};
        while (!ready) {
            if constexpr (Timed) {
                if (!cv.wait_until(l, steady::now() + 1h)) timed_out = true;
            } else {
                cv.wait(l);
            }
        }
    }
    bool queued() { return !cv.empty(); }
    void complete() {
        {
            std::lock_guard g{l};
            ready = true;
        }
        cv.notify_one();
    }
};
using cv_morph_op = cv_op<troupe::blocking_lock, false>;
using cv_mutex_op = cv_op<std::mutex, false>;
using cv_timed_op = cv_op<troupe::blocking_lock, true>;
using cv_timed_mutex_op = cv_op<std::mutex, true>;

struct semaphore_op {
    static constexpr const char* kind = "semaphore";
    troupe::semaphore s{0, "seam"};
    void arm() {}
    void wait() { s.acquire(); }
    bool queued() { return s.waiters() == 1; }
    void complete() { s.release(); }
};

struct future_op {
    static constexpr const char* kind = "future";
    troupe::future<int> f;
    int got = 0;
    void arm() { f.reset(); }
    void wait() { got = f.get(); }
    bool queued() { return f.waiters() == 1; }
    void complete() { f.fulfil(7); }
};

#define SEAM_OPS                                                                      \
    lock_op, owner_lock_op, cv_morph_op, cv_mutex_op, cv_timed_op, cv_timed_mutex_op, \
        semaphore_op, future_op

// ---------------------------------------------------------------- helpers

enum class from { user_thread, os_thread };
constexpr from both_contexts[] = {from::user_thread, from::os_thread};
std::string name_of(from f) { return f == from::user_thread ? "user thread" : "OS thread"; }

// Runs `waiter` as a user thread on `c` or as an OS thread, runs `main_part`
// meanwhile on this thread, and joins.
template <class W, class M>
void concurrently(troupe::cluster& c, from ctx, W&& waiter, M&& main_part) {
    if (ctx == from::user_thread) {
        troupe::thread t{c, std::forward<W>(waiter)};
        main_part();
        t.join();
    } else {
        std::thread t{std::forward<W>(waiter)};
        main_part();
        t.join();
    }
}

// Polls until `p()` holds (the fixture's watchdog bounds it); yields the
// processor when called from a user thread.
template <class P>
void await(P&& p) {
    troupe_test::wait_until(std::forward<P>(p));
}

// Runs `waiter` (which blocks in op.wait()) as in `concurrently`, and
// completes `op` from this thread once the waiter is queued on it.
template <class Op, class W>
void complete_when_queued(troupe::cluster& c, from ctx, Op& op, W&& waiter) {
    concurrently(c, ctx, std::forward<W>(waiter), [&] {
        await([&] { return op.queued(); });
        op.complete();
    });
}

[[maybe_unused]] std::size_t reports_naming(const troupe_test::misuse_recorder& r, const char* kind,
                                            const char* what) {
    std::size_t n = 0;
    for (const auto& m : r.messages())
        if (m.find(kind) != std::string::npos && m.find(what) != std::string::npos) ++n;
    return n;
}

// What `throw;` would rethrow now, or "" outside a handler.
std::string handled_now() {
    if (!std::current_exception()) return {};
    try {
        throw;
    } catch (const std::exception& e) {
        return e.what();
    }
}

// A user thread that throws, catches and yields until told to stop, so that
// another thread's exception state is live on the same processors while a
// waiter is parked.
struct exception_noise {
    std::atomic<bool> stop{false};
    std::atomic<int> wrong{0};
    troupe::thread t;
    explicit exception_noise(troupe::cluster& c)
        : t{c, [this] {
                while (!stop.load()) {
                    try {
                        throw std::logic_error("noise");
                    } catch (const std::exception&) {
                        troupe::this_thread::yield();
                        if (handled_now() != "noise") wrong.fetch_add(1);
                    }
                }
            }} {}
    ~exception_noise() {
        stop = true;
        t.join();
    }
};

// Arms far-off timers until the timer heap's next arm has to allocate, so
// that a timed wait meets the heap's allocation point; cancels them after.
class full_timer_heap {
public:
    full_timer_heap() {
        troupe::detail::timer_node warm;  // starts the timer service
        arm(warm);
        troupe::detail::timer_cancel(warm);
        for (int i = 0; i < (1 << 20); ++i) {
            auto& n = nodes_.emplace_back();
            troupe_test::fail_allocation g{1};
            try {
                arm(n);
            } catch (const std::bad_alloc&) {
                nodes_.pop_back();  // not armed (strong guarantee)
                return;
            }
        }
    }
    ~full_timer_heap() {
        for (auto& n : nodes_) troupe::detail::timer_cancel(n);
    }

private:
    static void arm(troupe::detail::timer_node& n) {
        n.deadline = steady::now() + 24h;
        n.fire = [](troupe::detail::timer_node&) noexcept {};
        troupe::detail::timer_arm(n);
    }
    std::deque<troupe::detail::timer_node> nodes_;
};

constexpr int race_rounds = troupe_test::scaled(400, 7);

}  // namespace

// ---------------------------------------------------------------- stray wakes

TEST_CASE_TEMPLATE("seam: a stray unpark never completes a blocking wait early", Op, SEAM_OPS) {
    // The waiter banks a stray permit on itself just before blocking, so the
    // primitive's first park() returns with its operation not done. The wait
    // must go on until complete(), and a checked build reports the stray
    // wake naming the primitive.
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            CAPTURE(name_of(ctx));
            troupe_test::misuse_recorder rec;
            Op op;
            op.arm();
            std::atomic<bool> completed{false};
            std::atomic<int> early{0};
            concurrently(
                c, ctx,
                [&] {
                    troupe::unpark(troupe::this_context());
                    op.wait();
                    if (!completed.load()) early.fetch_add(1);
                },
                [&] {
                    await([&] { return op.queued(); });
                    if constexpr (troupe::checked_build)
                        await([&] { return reports_naming(rec, Op::kind, "stray wake") > 0; });
                    completed = true;
                    op.complete();
                });
            CHECK(early.load() == 0);
            if constexpr (troupe::checked_build)
                CHECK(reports_naming(rec, Op::kind, "stray wake") == 1);
            CHECK(rec.messages().size() == (troupe::checked_build ? 1u : 0u));
        }
    });
}

// ---------------------------------------------------------------- handlers and unwinding

TEST_CASE_TEMPLATE("seam: parking inside a catch handler keeps the thread's exception", Op,
                   SEAM_OPS) {
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            CAPTURE(name_of(ctx));
            exception_noise noise{c};
            Op op;
            op.arm();
            std::string in_handler, rethrown;
            int uncaught_after = -1;
            complete_when_queued(c, ctx, op, [&] {
                try {
                    throw std::runtime_error("seam");
                } catch (const std::exception&) {
                    op.wait();  // parks inside the handler
                    in_handler = handled_now();
                    try {
                        throw;
                    } catch (const std::runtime_error& e) {
                        rethrown = e.what();
                    }
                }
                uncaught_after = std::uncaught_exceptions();
            });
            CHECK(in_handler == "seam");
            CHECK(rethrown == "seam");
            CHECK(uncaught_after == 0);
            CHECK(noise.wrong.load() == 0);
        }
    });
}

namespace {
template <class Op>
struct blocks_in_destructor {
    Op& op;
    int& uncaught_before;
    int& uncaught_after;
    ~blocks_in_destructor() {
        uncaught_before = std::uncaught_exceptions();
        op.wait();  // parks while the exception unwinds
        uncaught_after = std::uncaught_exceptions();
    }
};
}  // namespace

TEST_CASE_TEMPLATE("seam: blocking in a destructor while an exception unwinds", Op, SEAM_OPS) {
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            CAPTURE(name_of(ctx));
            exception_noise noise{c};
            Op op;
            op.arm();
            int before = -1, after = -1, outside = -1;
            std::string caught;
            complete_when_queued(c, ctx, op, [&] {
                try {
                    blocks_in_destructor<Op> d{op, before, after};
                    throw std::runtime_error("unwinding");
                } catch (const std::runtime_error& e) {
                    caught = e.what();
                }
                outside = std::uncaught_exceptions();
            });
            CHECK(before == 1);
            CHECK(after == 1);
            CHECK(caught == "unwinding");
            CHECK(outside == 0);
            CHECK(noise.wrong.load() == 0);
        }
    });
}

// ---------------------------------------------------------------- exceptions under the primitive

TEST_CASE_TEMPLATE("seam: an exception from the body under a lock releases it to the next waiter",
                   Lock, troupe::blocking_lock, troupe::owner_lock) {
    // The thread under test holds the lock (owner_lock: two levels) while
    // another thread queues for it; the body throws; the guards' unlocks
    // during unwinding hand the lock to the waiter.
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            CAPTURE(name_of(ctx));
            Lock l;
            std::atomic<bool> entered{false}, got{false};
            std::string caught;
            concurrently(
                c, ctx,
                [&] {
                    try {
                        std::lock_guard g{l};
                        if constexpr (std::is_same_v<Lock, troupe::owner_lock>) {
                            std::lock_guard again{l};
                            entered = true;
                            await([&] { return l.waiters() == 1; });
                            throw std::runtime_error("body");
                        } else {
                            entered = true;
                            await([&] { return l.waiters() == 1; });
                            throw std::runtime_error("body");
                        }
                    } catch (const std::runtime_error& e) {
                        caught = e.what();
                    }
                },
                [&] {
                    await([&] { return entered.load(); });
                    l.lock();  // queued until the body throws
                    got = true;
                    l.unlock();
                });
            CHECK(caught == "body");
            CHECK(got.load());
            CHECK(l.try_lock());  // every level was released
            l.unlock();
            CHECK(l.waiters() == 0);
        }
    });
}

TEST_CASE_TEMPLATE(
    "seam: a condition-wait predicate that throws leaves the lock held and nothing queued", Lock,
    troupe::blocking_lock, std::mutex) {
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            for (bool timed : {false, true}) {
                CAPTURE(name_of(ctx));
                CAPTURE(timed);
                Lock l;
                troupe::condition_variable cv;
                bool ready = false;
                bool held_in_handler = false;
                std::string caught;
                concurrently(
                    c, ctx,
                    [&] {
                        std::unique_lock g{l};
                        try {
                            auto pred = [&] {
                                if (ready) throw std::runtime_error("predicate");
                                return false;
                            };
                            if (timed) cv.wait_until(l, steady::now() + 1h, pred);
                            else cv.wait(l, pred);
                        } catch (const std::runtime_error& e) {
                            caught = e.what();
                            if constexpr (std::is_same_v<Lock, troupe::blocking_lock>)
                                held_in_handler = l.owned_by_caller();
                            else held_in_handler = g.owns_lock();
                        }
                    },
                    [&] {
                        await([&] { return !cv.empty(); });
                        {
                            std::lock_guard g{l};
                            ready = true;
                        }
                        cv.notify_one();
                    });
                CHECK(caught == "predicate");
                CHECK(held_in_handler);
                CHECK(cv.empty());
                CHECK_FALSE(cv.notify_one());
                CHECK(l.try_lock());
                l.unlock();
            }
        }
    });
}

namespace {
struct throws_on_copy {
    int v = 0;
    static inline std::atomic<bool> armed{false};
    explicit throws_on_copy(int x) : v(x) {}
    throws_on_copy(const throws_on_copy& o) : v(o.v) {
        if (armed.load()) throw std::runtime_error("copy");
    }
};
}  // namespace

TEST_CASE(
    "seam: a future whose value construction throws stays empty; its waiters get the next fulfil") {
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            CAPTURE(name_of(ctx));
            troupe::future<throws_on_copy> f;
            int got = 0;
            concurrently(
                c, ctx, [&] { got = f.get().v; },
                [&] {
                    await([&] { return f.waiters() == 1; });
                    const throws_on_copy value{5};
                    throws_on_copy::armed = true;
                    CHECK_THROWS_AS(f.fulfil(value), std::runtime_error);
                    throws_on_copy::armed = false;
                    CHECK_FALSE(f.available());  // strong guarantee
                    CHECK(f.waiters() == 1);     // the waiter still waits
                    CHECK(f.fulfil(value));
                });
            CHECK(got == 5);
        }
    });
}

TEST_CASE("seam: an exception delivered to a future is rethrown to its blocked waiter") {
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            CAPTURE(name_of(ctx));
            troupe::future<int> f;
            std::string caught;
            concurrently(
                c, ctx,
                [&] {
                    try {
                        (void)f.get();
                    } catch (const std::runtime_error& e) {
                        caught = e.what();
                    }
                },
                [&] {
                    await([&] { return f.waiters() == 1; });
                    f.fulfil_exception(std::make_exception_ptr(std::runtime_error("delivered")));
                });
            CHECK(caught == "delivered");
        }
    });
}

// ---------------------------------------------------------------- allocation failure

TEST_CASE_TEMPLATE("seam: blocking waits and their completion allocate nothing", Op, SEAM_OPS) {
    // No allocation on fast paths: the wait nodes live on the stack. With the injector
    // failing the first allocation of each side, neither the blocked wait
    // nor the completion makes one (so none can fail).
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            CAPTURE(name_of(ctx));
            Op op;
            op.arm();
            bool waiter_allocated = true, completer_allocated = true;
            concurrently(
                c, ctx,
                [&] {
                    troupe_test::fail_allocation g{1};
                    op.wait();
                    waiter_allocated = g.seen() != 0;
                },
                [&] {
                    await([&] { return op.queued(); });
                    troupe_test::fail_allocation g{1};
                    op.complete();
                    completer_allocated = g.seen() != 0;
                });
            CHECK_FALSE(waiter_allocated);
            CHECK_FALSE(completer_allocated);
        }
    });
}

TEST_CASE_TEMPLATE(
    "seam: a timed condition wait whose timer cannot be armed throws with the lock held and "
    "nothing queued",
    Lock, troupe::blocking_lock, std::mutex) {
    // Arming the timer is the timed wait's one allocation point (the timer
    // heap grows). The timer is armed before the waiter is queued and the
    // lock released: otherwise bad_alloc would leave the waiter's stack node
    // in the queue (a later notify writing to a dead frame) and the lock
    // released under the caller's guard.
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            CAPTURE(name_of(ctx));
            Lock l;
            troupe::condition_variable cv;
            int failures = 0, held_after_failure = 0, queued_after_failure = 0, timeouts = 0;
            std::size_t points = 0;
            auto run = [&] {
                full_timer_heap heap;
                points = troupe_test::for_each_allocation_failure([&](std::size_t) {
                    std::unique_lock g{l};
                    try {
                        if (!cv.wait_for(l, 50us)) ++timeouts;
                    } catch (const std::bad_alloc&) {
                        ++failures;
                        if constexpr (std::is_same_v<Lock, troupe::blocking_lock>)
                            held_after_failure += l.owned_by_caller();
                        else held_after_failure += g.owns_lock();
                        queued_after_failure += !cv.empty();
                        throw;
                    }
                });
            };
            concurrently(c, ctx, run, [] {});
            CHECK(points >= 1);
            CHECK(failures == int(points));
            CHECK(held_after_failure == failures);
            CHECK(queued_after_failure == 0);
            CHECK(timeouts == 1);  // the run in which nothing failed timed out normally
            CHECK(cv.empty());
            CHECK_FALSE(cv.notify_one());
            CHECK(l.try_lock());
            l.unlock();
        }
    });
}

// ---------------------------------------------------------------- timeout racing completion

TEST_CASE_TEMPLATE("seam: a timed wait racing its notify has exactly one outcome", Lock,
                   troupe::blocking_lock, std::mutex) {
    // The notify lands around the deadline. Either the notify won (the wait
    // returns true and notify_one reports a waiter) or the timer won (false
    // and false): never both, never neither, and the lock is held on return.
    on_processors([](troupe::cluster& c) {
        for (from ctx : both_contexts) {
            CAPTURE(name_of(ctx));
            Lock l;
            troupe::condition_variable cv;
            int mismatches = 0, not_held = 0, notified = 0, timed_out = 0;
            for (int round = 0; round < race_rounds; ++round) {
                std::atomic<bool> done{false};
                bool result = false, held = true, woke = false;
                concurrently(
                    c, ctx,
                    [&] {
                        {
                            std::unique_lock g{l};
                            result = cv.wait_until(
                                l, steady::now() + std::chrono::microseconds(round % 16));
                            if constexpr (std::is_same_v<Lock, troupe::blocking_lock>)
                                held = l.owned_by_caller();
                        }
                        done = true;
                    },
                    [&] {
                        await([&] { return !cv.empty() || done.load(); });
                        woke = cv.notify_one();
                    });
                mismatches += result != woke;
                not_held += !held;
                (result ? notified : timed_out) += 1;
            }
            CHECK(mismatches == 0);
            CHECK(not_held == 0);
            CHECK(notified + timed_out == race_rounds);
            CHECK(cv.empty());
        }
    });
}
