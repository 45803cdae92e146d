// expect: must outlive its receive
// Must NOT compile: a temporary message would be gone before its receive.
#include "troupe/actors.hpp"

struct greeting : troupe::message {};
struct greeter : troupe::actor {
    troupe::allocation receive(greeting&) { return troupe::Nodelete; }
};

void misuse(greeter& g) { g | greeting{}; }
