// expect: sizeof ... (Ls ...) > 0 [with Ls = {}]
// A statement that protects nothing.
#include <mutex>
#include <vector>

#include "troupe/mutex.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
    TROUPE_MUTEX() { ++counter; }
    return counter == 42;
}
