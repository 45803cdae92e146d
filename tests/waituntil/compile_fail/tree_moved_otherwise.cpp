// expect: a clause tree cannot be stored, copied or moved
// The otherwise and fair-mode forms take trees the same way.
#include <utility>

#include "troupe/future.hpp"
#include "troupe/waituntil.hpp"

int main() {
    troupe::future<int> a;
    troupe::rotation r;
    auto tree = troupe::on(a);
    troupe::waituntil(r, std::move(tree), troupe::otherwise([] {}));
}
