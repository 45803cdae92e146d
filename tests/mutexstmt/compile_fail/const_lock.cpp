// expect: lockable<Ls>) [with Ls = {const std::mutex}]
// A const lock cannot be locked.
#include <mutex>
#include <vector>

#include "troupe/mutex.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
    const std::mutex& cm = m;
    TROUPE_MUTEX(cm) { ++counter; }
    return counter == 42;
}
