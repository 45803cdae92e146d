// expect-compile
// Control case: the same program with a receive and a registration compiles.
#include "troupe/remote.hpp"

struct hello : troupe::message {};
TROUPE_REMOTE_MESSAGE(hello, "cf.hello");

struct greeter : troupe::actor {
    troupe::allocation receive(hello&) { return troupe::Nodelete; }
};

void f(const troupe::remote::remote_ref<greeter>& g) {
    hello h;
    g | h | troupe::finished_msg;
    g.send(hello{});
}
