// expect: sizeof ... (Ls ...) > 0 [with Ls = {}]
// A lambda form that protects nothing.
#include <mutex>
#include <vector>

#include "troupe/mutex.hpp"

int main() {
    std::mutex m;
    std::vector<std::mutex*> set{&m};
    int counter = 0;
    counter += troupe::mutex()([] { return 1; });
    return counter == 42;
}
