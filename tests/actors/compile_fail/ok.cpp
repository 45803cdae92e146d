// expect-compile
// Must compile: the control case for the compile-fail tests.
#include "troupe/actors.hpp"

struct greeting : troupe::message {};
struct greeter : troupe::actor {
    troupe::allocation receive(greeting&) { return troupe::Nodelete; }
};

void fine(greeter& g, greeting& m) { g | m | troupe::finished_msg; }
void fine_value(greeter& g) { troupe::send<greeting>(g) | troupe::finished_msg; }
