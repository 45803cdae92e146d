// Stray wakes on the waits core implements outside the lock primitives:
// sleeping and joining. A stray unpark (a bug elsewhere, or the public
// unpark) must never end either early: before the fix, an early sleep
// left its timer armed on a dead frame and an early join freed the stack
// of a thread still running.
#include <atomic>
#include <chrono>
#include <thread>

#include "fixture.hpp"
#include "scale.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/wake_guard.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"

using namespace std::chrono_literals;

TEST_CASE("a stray unpark does not end a sleep before its deadline") {
    troupe_test::on_processors([](troupe::cluster& c) {
        troupe_test::misuse_recorder rec;  // checked builds report the stray wake
        std::atomic<int> early{0};
        troupe::thread t{
            c, [&] {
                for (int i = 0; i < 20; ++i) {
                    const auto deadline = std::chrono::steady_clock::now() + 2ms;
                    troupe::unpark(
                        troupe::this_context());  // banked: the sleep's first park returns at once
                    troupe::this_thread::sleep_until(deadline);
                    if (std::chrono::steady_clock::now() < deadline) early.fetch_add(1);
                }
            }};
        t.join();
        CHECK(early.load() == 0);
        if constexpr (troupe::checked_build) CHECK(rec.messages().size() == 20);
    });
}

// Many rounds: each also checks that the finisher's wake of a joiner that
// left early (on the stray permit) ends before the joiner's thread is freed
// and its memory reused by the next round's thread. Before wake_guard, TSan
// saw that wake read a context under construction (2 of 10 runs at 2,000
// rounds).
TEST_CASE("a stray unpark does not end a join before the thread finished") {
    troupe_test::on_processors([](troupe::cluster& c) {
        troupe_test::misuse_recorder rec;
        for (int round = 0; round < troupe_test::scaled(5000); ++round) {
            troupe::semaphore go{0};
            std::atomic<bool> child_done{false};
            bool done_at_join = false;
            troupe::thread joiner{
                c, [&] {
                    troupe::thread child{c, [&] {
                                             go.acquire();
                                             child_done.store(true);
                                         }};
                    troupe::unpark(
                        troupe::this_context());  // stray permit: join's first park returns at once
                    go.release();
                    child.join();
                    done_at_join = child_done.load();
                }};
            joiner.join();
            CHECK(done_at_join);
        }
    });
}

// A semaphore's waiter that leaves on its grant (a stray permit ended its
// park first) and whose thread then ends at once: the releaser, on another
// thread, is still inside its unpark of that waiter. The waiter's context
// must outlive that unpark (detail/wake_guard.hpp); under TSan the next
// round's thread, built where the old one was, would race with the wake.
TEST_CASE("a waiter that leaves on its grant outlives the releaser's unpark") {
    troupe_test::on_processors([](troupe::cluster& c) {
        troupe_test::misuse_recorder rec;
        int acquired = 0;
        for (int round = 0; round < troupe_test::scaled(5000); ++round) {
            troupe::semaphore s{0};
            std::atomic<bool> queued{false};
            troupe::thread waiter{c, [&] {
                                      troupe::unpark(troupe::this_context());  // stray permit
                                      queued.store(true);
                                      s.acquire();
                                      ++acquired;
                                  }};
            troupe::thread releaser{c, [&] {
                                        while (!queued.load()) troupe::this_thread::yield();
                                        s.release();
                                    }};
            waiter.join();  // frees the waiter's thread while the releaser may still wake it
            releaser.join();
        }
        CHECK(acquired == troupe_test::scaled(5000));
    });
}

// A wake's announcement spans no switch point (detail/wake_guard.hpp): a
// user thread inside one that meets a contended spinlock (a processor's
// ready queue, in unpark) waits for it on its kernel thread instead of
// yielding its processor. Before, the spinlock's slow path switched it
// out; another thread's guard on the same kernel thread then restored the
// stale announcement, and the woken thread's end waited for it forever
// (waituntil/channels hung under TSan). Observed here by whether another
// user thread of the same single processor ran while the lock was held.
TEST_CASE("a user thread inside a wake's announcement does not yield its processor on a spinlock") {
    troupe::cluster c{1};
    troupe::spinlock held;
    std::atomic<bool> locking{false}, other_ran{false}, unlocked{false};
    std::atomic<bool> other_ran_while_held{false};
    held.lock();  // by main, an OS thread: released below
    troupe::context& announced = troupe::this_context();
    troupe::thread waker{c, [&] {
                             troupe::detail::wake_guard g{announced};
                             locking.store(true);
                             held.lock();  // contended: the slow path, past its spins
                             held.unlock();
                         }};
    troupe_test::wait_until([&] { return locking.load(); });
    // Queued behind the waker on the one processor: it runs only if the
    // waker gives the processor up.
    troupe::thread other{c, [&] {
                             other_ran.store(true);
                             if (!unlocked.load()) other_ran_while_held.store(true);
                         }};
    // Let the waker spin well past the spinlock's spins (a bounded number
    // of our own yields, not a timing: with the fix nothing else can run
    // on the processor whatever the count; without it `other` ran within
    // the first few).
    for (int i = 0; i < 2000 && !other_ran.load(); ++i) std::this_thread::yield();
    unlocked.store(true);
    held.unlock();
    waker.join();
    other.join();
    CHECK_FALSE(other_ran_while_held.load());
}
