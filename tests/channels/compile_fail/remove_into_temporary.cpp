// expect: cannot bind non-const lvalue reference
// A remove clause needs a variable to remove into, not a temporary.
#include "troupe/channel.hpp"

int main() {
    troupe::channel<int> ch{1};
    auto clause = ch.remove_into(42);
    (void)clause;
}
