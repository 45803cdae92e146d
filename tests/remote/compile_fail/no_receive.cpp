// expect: has no `receive(M&)` for this message type
// A remote send of a message the actor type has no receive for must not
// compile, exactly like a local send.
#include "troupe/remote.hpp"

struct hello : troupe::message {};
TROUPE_REMOTE_MESSAGE(hello, "cf.hello");
struct other : troupe::message {};
TROUPE_REMOTE_MESSAGE(other, "cf.other");

struct greeter : troupe::actor {
    troupe::allocation receive(hello&) { return troupe::Nodelete; }
};

void f(const troupe::remote::remote_ref<greeter>& g) {
    other o;
    g | o;
}
