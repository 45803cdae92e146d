// expect: a request belongs to its requester
// Must NOT compile: a request carries its requester's future; the runtime
// cannot own it.
#include "troupe/actors.hpp"

struct question : troupe::request<int> {};
struct oracle : troupe::actor {
    troupe::allocation receive(question& q) {
        q.reply(42);
        return troupe::Nodelete;
    }
};

void misuse(oracle& o) { troupe::send<question>(o); }
