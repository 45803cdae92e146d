// expect: lockable<Ls>) [with Ls = {std::mutex, int}]
// An int has no lock()/unlock().
#include <mutex>
#include <vector>

#include "troupe/mutex.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
    TROUPE_MUTEX(m, counter) { ++counter; }
    return counter == 42;
}
