// expect: a clause tree cannot be stored, copied or moved
// A stored subtree cannot be joined into a tree either, moved or not.
#include <utility>

#include "troupe/future.hpp"
#include "troupe/waituntil.hpp"

int main() {
    troupe::future<int> a, b;
    auto left = troupe::on(a);
    troupe::waituntil(std::move(left) | troupe::on(b));
}
