#pragma once
// Actor tests: run a body at 1, 2 and 4 workers (4 oversubscribes the CI
// machine on purpose), each under the shared watchdog; iteration counts
// scaled down under the sanitizers with fixture.hpp's scaled().
#include <cstddef>
#include <initializer_list>
#include <string>

#include "fixture.hpp"
#include "troupe/actors.hpp"

namespace troupe_test {

/// Runs body(workers) for each worker count under a watchdog.
template <class F>
void on_workers(F&& body, std::initializer_list<std::size_t> counts = {1, 2, 4}) {
    for (std::size_t n : counts) {
        CAPTURE(n);
        watchdog w{current_test() + " at " + std::to_string(n) + " worker(s)"};
        body(n);
    }
}

/// Whether `text` (a misuse report, an exception's message) contains `what`;
/// if not, the text is logged with the failing check.
inline bool contains(const std::string& text, const char* what) {
    if (text.find(what) != std::string::npos) return true;
    MESSAGE("text was: " << text);
    return false;
}

/// An executor configuration with `workers` workers and everything else
/// default.
inline troupe::actor_system_config workers(std::size_t n) {
    troupe::actor_system_config c;
    c.workers = n;
    return c;
}

}  // namespace troupe_test
