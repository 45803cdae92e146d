// expect: cannot bind non-const lvalue reference of type
// A temporary run-time set would dangle.
#include <mutex>
#include <vector>

#include "troupe/mutex.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
    TROUPE_MUTEX(std::vector<std::mutex*>{&m}) { ++counter; }
    return counter == 42;
}
