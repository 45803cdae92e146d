// Inheritance chains destroyed through the base: Delete runs the most
// derived destructor, for actors and for messages (Cforall tests "inherit"
// and "inline").
#include <mutex>
#include <string>
#include <vector>

#include "actor_fixture.hpp"

using troupe_test::on_workers;

namespace {

std::mutex m;
std::vector<std::string> events;
void note(const char* s) {
    std::lock_guard g{m};
    events.emplace_back(s);
}
std::vector<std::string> take() {
    std::lock_guard g{m};
    return std::exchange(events, {});
}

struct msg_wrapper : troupe::message {
    int value = 0;
    ~msg_wrapper() override { note("~msg_wrapper"); }
};
struct d_msg : msg_wrapper {
    ~d_msg() override { note("~d_msg"); }
};
struct d_msg2 : d_msg {  // three levels below message
    ~d_msg2() override { note("~d_msg2"); }
};

struct server : troupe::actor {
    troupe::allocation receive(msg_wrapper& w) {
        note(w.value == 1 ? "got 1" : "got other");
        return troupe::Nodelete;
    }
    ~server() override { note("~server"); }
};
struct server2 : server {
    troupe::allocation receive(msg_wrapper& w) {
        note("server2 got");
        return server::receive(w) == troupe::Nodelete ? troupe::Delete : troupe::Finished;
    }
    ~server2() override { note("~server2"); }
};

}  // namespace

TEST_CASE(
    "Delete on a heap actor and message deep in their hierarchies runs the most derived "
    "destructors") {
    on_workers([](std::size_t w) {
        take();
        {
            troupe::actor_system sys{w};
            troupe::actor* a = new server2;  // held through the base
            auto* msg = new d_msg2;
            msg->value = 1;
            msg->set_allocation(troupe::Delete);
            *static_cast<server2*>(a) | *msg;
            sys.stop();
        }
        CHECK(take() == std::vector<std::string>{"server2 got", "got 1", "~d_msg2", "~d_msg",
                                                 "~msg_wrapper", "~server2", "~server"});
    });
}

TEST_CASE("a stack message set to Nodelete survives its receive; destroyed at scope exit") {
    take();
    {
        troupe::actor_system sys{1};
        server s;
        d_msg2 msg;  // Nodelete by default
        msg.value = 2;
        s | msg | troupe::finished_msg;
        sys.stop();
        CHECK(take() == std::vector<std::string>{"got other"});
    }
    // Reverse declaration order: the message, then the actor.
    CHECK(take() == std::vector<std::string>{"~d_msg2", "~d_msg", "~msg_wrapper", "~server"});
}

TEST_CASE("Destroy on a message runs its destructor chain without freeing it") {
    take();
    alignas(d_msg) unsigned char storage[sizeof(d_msg)];
    {
        troupe::actor_system sys{1};
        server s;
        auto* msg = ::new (storage) d_msg;
        msg->set_allocation(troupe::Destroy);
        s | *msg | troupe::finished_msg;
        sys.stop();
    }
    CHECK(take() == std::vector<std::string>{"got other", "~d_msg", "~msg_wrapper", "~server"});
}
