// expect: r.register_select(n)
// Only types meeting troupe::selectable make clauses.
#include <mutex>

#include "troupe/waituntil.hpp"

int main() {
    std::mutex m;
    troupe::waituntil(troupe::on(m));
}
