// expect: has no `receive(M&)` for this message type
// Must NOT compile: a value send is statically typed like `a | m`.
#include "troupe/actors.hpp"

struct greeting : troupe::message {};
struct farewell : troupe::message {};
struct greeter : troupe::actor {
    troupe::allocation receive(greeting&) { return troupe::Nodelete; }
};

void misuse(greeter& g) { troupe::send<farewell>(g); }
