// expect: has no `receive(M&)` for this message type
// Must NOT compile: the actor has no receive for this message type.
#include "troupe/actors.hpp"

struct greeting : troupe::message {};
struct farewell : troupe::message {};
struct greeter : troupe::actor {
    troupe::allocation receive(greeting&) { return troupe::Nodelete; }
};

void misuse(greeter& g, farewell& f) { g | f; }
