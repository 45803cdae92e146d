// expect: sizeof ... (Ls ...) > 0 [with Ls = {}]
// A guard that protects nothing.
#include <mutex>
#include <vector>

#include "troupe/mutex.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
    troupe::scoped_mutex g{};
    return counter == 42;
}
