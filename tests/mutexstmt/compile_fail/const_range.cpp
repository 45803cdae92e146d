// expect: !(is_const_v<typename std::remove_reference<decltype(
// A const run-time set cannot be sorted in place.
#include <mutex>
#include <vector>

#include "troupe/mutex.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
    const std::vector<std::mutex*>& cset = set;
    TROUPE_MUTEX(cset) { ++counter; }
    return counter == 42;
}
