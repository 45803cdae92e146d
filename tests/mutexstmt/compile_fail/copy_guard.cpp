// expect: use of deleted function
// A guard is neither copyable nor movable.
#include <mutex>
#include <vector>

#include "troupe/mutex.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
    troupe::scoped_mutex g{m};
    auto copy = g;
    return counter == 42;
}
