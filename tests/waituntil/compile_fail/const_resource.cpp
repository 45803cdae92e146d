// expect: is_const_v<typename std::remove_reference
// Waiting on a resource changes it (a lock is taken, an element removed):
// a const resource cannot be a clause.
#include "troupe/future.hpp"
#include "troupe/waituntil.hpp"

int main() {
    const troupe::future<int> f;
    troupe::waituntil(troupe::on(f));
}
