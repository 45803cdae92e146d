// Compile-fail cases for the mutex statement (see meson.build): compiled once
// per CASE_ macro, each of which must be rejected; CASE_CONTROL must compile.
#include <mutex>
#include <vector>

#include "troupe/mutex_stmt.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
#if defined(CASE_CONTROL)
    // Every form with valid arguments.
    TROUPE_MUTEX(m) { ++counter; }
    TROUPE_MUTEX(set) { ++counter; }
    troupe::scoped_mutex g{m};
    counter += troupe::mutex(set)([] { return 1; });
#elif defined(CASE_EMPTY_GUARD)
    troupe::scoped_mutex g{};  // protects nothing
#elif defined(CASE_EMPTY_STATEMENT)
    TROUPE_MUTEX() { ++counter; }  // protects nothing
#elif defined(CASE_EMPTY_LAMBDA)
    counter += troupe::mutex()([] { return 1; });  // protects nothing
#elif defined(CASE_NOT_LOCKABLE)
    TROUPE_MUTEX(m, counter) { ++counter; }  // int has no lock()/unlock()
#elif defined(CASE_CONST_LOCK)
    const std::mutex& cm = m;
    TROUPE_MUTEX(cm) { ++counter; }  // a const lock cannot be locked
#elif defined(CASE_CONST_RANGE)
    const std::vector<std::mutex*>& cset = set;
    TROUPE_MUTEX(cset) { ++counter; }  // cannot be sorted in place
#elif defined(CASE_RVALUE_RANGE)
    TROUPE_MUTEX(std::vector<std::mutex*>{&m}) { ++counter; }  // would dangle
#elif defined(CASE_COPY_GUARD)
    troupe::scoped_mutex g{m};
    auto copy = g;  // a guard is neither copyable nor movable
#endif
    return counter == 42;
}
