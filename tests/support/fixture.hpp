#pragma once
// Shared test fixture: run a concurrency test at 1, 2 and 4 processors, each
// on a fresh cluster, under a watchdog that aborts with the test's name if it
// deadlocks instead of hanging CI.
#include <doctest/doctest.h>

#include <chrono>
#include <initializer_list>
#include <string>
#include <vector>

#include "scale.hpp"
#include "troupe/cluster.hpp"
#include "troupe/error.hpp"
#include "troupe/thread.hpp"

namespace troupe_test {

/// The running doctest case's name.
std::string current_test();

/// Aborts the process, naming `what`, unless destroyed within the limit
/// (environment TROUPE_WATCHDOG_SECONDS, default 120).
class watchdog {
public:
    explicit watchdog(std::string what);
    ~watchdog();
    watchdog(const watchdog&) = delete;

private:
    struct state;
    state* s_;
};

/// Waits until `pred()` holds, state-based, never a sleep: a user thread
/// yields its processor, an OS thread its kernel thread. The fixture's
/// watchdog bounds the wait.
template <class P>
void wait_until(P&& pred) {
    while (!pred()) troupe::this_thread::yield();
}

/// Runs `body(cluster&)` once per processor count, each on a new cluster.
template <class F>
void on_processors(F&& body, std::initializer_list<std::size_t> counts = {1, 2, 4}) {
    for (std::size_t n : counts) {
        CAPTURE(n);
        watchdog w{current_test() + " at " + std::to_string(n) + " processor(s)"};
        troupe::cluster c{n};
        body(c);
    }
}

/// Runs `f` as a user thread on `c` and joins it (rethrowing).
template <class F>
void run_in(troupe::cluster& c, F&& f) {
    troupe::thread t{c, std::forward<F>(f)};
    t.join();
}

/// Installs a misuse handler that records messages instead of aborting.
class misuse_recorder {
public:
    misuse_recorder();
    ~misuse_recorder();
    /// Messages recorded so far (in order).
    std::vector<std::string> messages() const;
    /// The last message, or "" if none.
    std::string last() const;

private:
    troupe::misuse_handler previous_;
};

}  // namespace troupe_test
