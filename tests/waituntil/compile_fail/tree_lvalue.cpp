// expect: a clause tree cannot be stored, copied or moved
// A clause tree is single-use and refers to the temporaries it was built
// from: waituntil takes it only as the temporary written in the call.
#include "troupe/future.hpp"
#include "troupe/waituntil.hpp"

int main() {
    troupe::future<int> a, b;
    auto tree = troupe::on(a) | troupe::on(b);
    troupe::waituntil(tree);
}
