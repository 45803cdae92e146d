// expect: this message type is not registered for remote sends
// A remote send of a message type that is not registered must not compile.
#include "troupe/remote.hpp"

struct hello : troupe::message {};

struct greeter : troupe::actor {
    troupe::allocation receive(hello&) { return troupe::Nodelete; }
};

void f(const troupe::remote::remote_ref<greeter>& g) { g.send(hello{}); }
