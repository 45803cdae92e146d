// expect: clause_body<Body
// A clause body takes no arguments (only on_any bodies get an index).
#include "troupe/future.hpp"
#include "troupe/waituntil.hpp"

int main() {
    troupe::future<int> f;
    troupe::waituntil(troupe::on(f, [](int) {}));
}
