// expect: a clause tree cannot be stored, copied or moved
// A stored tree cannot be guarded with when() and passed on.
#include <utility>

#include "troupe/future.hpp"
#include "troupe/waituntil.hpp"

int main() {
    troupe::future<int> a, b;
    auto tree = troupe::on(a) & troupe::on(b);
    troupe::waituntil(troupe::when(true, std::move(tree)));
}
