// expect: a clause tree cannot be stored, copied or moved
// Moving a stored tree into waituntil would defeat the rule that a tree is
// written inside the call (it refers to temporaries that are gone).
#include <utility>

#include "troupe/future.hpp"
#include "troupe/waituntil.hpp"

int main() {
    troupe::future<int> a, b;
    auto tree = troupe::on(a) | troupe::on(b);
    troupe::waituntil(std::move(tree));
}
