// Stray wakes on the waits core implements outside the lock primitives:
// sleeping and joining. A stray unpark (a bug elsewhere, or the public
// unpark) must never end either early: before the fix, an early sleep
// left its timer armed on a dead frame and an early join freed the stack
// of a thread still running.
#include <atomic>
#include <chrono>

#include "fixture.hpp"
#include "troupe/context.hpp"
#include "troupe/semaphore.hpp"
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

TEST_CASE("a stray unpark does not end a join before the thread finished") {
    troupe_test::on_processors([](troupe::cluster& c) {
        troupe_test::misuse_recorder rec;
        for (int round = 0; round < 20; ++round) {
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
