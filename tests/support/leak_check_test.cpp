// The per-test leak check can fail: it sees one block kept on purpose, from
// the guard's own thread, from a user thread on another processor and from
// a plain OS thread; it fails the test when the guard ends with a block
// kept; and it holds when every block comes back, also across threads.
#include <memory>
#include <thread>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/thread.hpp"

using troupe_test::leak_check;

namespace {
// Kept reachable (LSan, in the asan build, only reports unreachable blocks)
// and freed at exit.
std::unique_ptr<int> kept;
std::unique_ptr<int> kept_by_thread;
// Blocks pass through here so the compiler cannot pair a new with its
// delete and elide both.
int* volatile sink = nullptr;
}  // namespace

TEST_CASE("leak_check counts a block kept on purpose, then its return") {
    leak_check lc;
    CHECK(lc.leaked() == 0);
    sink = new int(1);
    CHECK(lc.leaked() == 1);
    delete sink;
    CHECK(lc.leaked() == 0);
}

TEST_CASE("leak_check counts blocks across threads: user threads on any processor, OS threads") {
    troupe_test::on_processors([](troupe::cluster& c) {
        leak_check lc;
        // Made by a user thread (on whichever processor runs it), freed here.
        troupe_test::run_in(c, [] { sink = new int(2); });
        CHECK(lc.leaked() == 1);
        delete sink;
        CHECK(lc.leaked() == 0);
        // Made here, freed by an OS thread.
        sink = new int(3);
        std::thread t{[] { delete sink; }};
        t.join();
        CHECK(lc.leaked() == 0);
    });
}

TEST_CASE("leak_check fails the test whose guard ends with a block kept" *
          doctest::expected_failures(1)) {
    leak_check::set_strict(true);
    leak_check lc;
    kept = std::make_unique<int>(42);
}

TEST_CASE("leak_check fails the test when a user thread keeps a block" *
          doctest::expected_failures(1)) {
    leak_check::set_strict(true);
    troupe::cluster c{2};
    leak_check lc;
    troupe_test::run_in(c, [] { kept_by_thread = std::make_unique<int>(7); });
}

TEST_CASE("leak_check stays silent in a test that already failed" * doctest::expected_failures(1)) {
    // Exactly one failure (the CHECK below), not two: the guard does not
    // add a leak report to a test that failed for another reason.
    static std::unique_ptr<int> left;
    leak_check lc;
    left = std::make_unique<int>(5);
    CHECK(false);
}
