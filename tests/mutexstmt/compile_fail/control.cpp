// expect-compile
// Every form with valid arguments.
#include <mutex>
#include <vector>

#include "troupe/mutex.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
    TROUPE_MUTEX(m) { ++counter; }
    TROUPE_MUTEX(set) { ++counter; }
    troupe::scoped_mutex g{m};
    counter += troupe::mutex(set)([] { return 1; });
    return counter == 42;
}
