// The thesis's first actor program (Parsons, Fig. "Cforall Actor Syntax"):
// string and integer messages, cascaded sends, the finished_msg poison pill.
//
// Output:
//   string message "Hello World"
//   integer message 42
//   integer message 42
#include <cstdio>

#include "troupe/actors.hpp"

struct str_msg : troupe::message {
    char str[12];
    explicit str_msg(const char* s) { std::snprintf(str, sizeof str, "%s", s); }
};
struct int_msg : troupe::message {
    int i;
    explicit int_msg(int i) : i(i) {}
};

struct my_actor : troupe::actor {
    troupe::allocation receive(str_msg& m) {
        std::printf("string message \"%s\"\n", m.str);
        return troupe::Nodelete;  // actor not finished
    }
    troupe::allocation receive(int_msg& m) {
        std::printf("integer message %d\n", m.i);
        return troupe::Nodelete;
    }
};

int main() {
    str_msg str{"Hello World"};
    int_msg num{42};
    troupe::start_actor_system();  // sets up the executor
    my_actor actor;
    actor | str | num;             // cascaded sends
    actor | num;                   // send
    actor | troupe::finished_msg;  // builtin poison pill: the actor finishes
    troupe::stop_actor_system();   // waits until every actor has finished
}
