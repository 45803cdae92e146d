// Poison pills, each kind, on stack and heap actors (Cforall test "poison").
#include <atomic>
#include <memory>
#include <new>
#include <vector>

#include "actor_fixture.hpp"

using troupe_test::on_workers;

namespace {

std::atomic<int> destroyed{0};

// The actor base is not the first base: its address differs from the
// object's, which Delete and Destroy must handle.
struct payload {
    int val = 0;
};
struct server : payload, troupe::actor {
    ~server() override {
        val = 42;
        destroyed.fetch_add(1);
    }
};

struct overrider : troupe::actor {
    int pills = 0;
    troupe::allocation receive(troupe::finished_msg_t&) {
        ++pills;
        return pills == 2 ? troupe::Finished : troupe::Nodelete;  // needs two
    }
};

}  // namespace

TEST_CASE("finished_msg ends stack actors; nothing is destroyed") {
    on_workers([](std::size_t w) {
        destroyed = 0;
        troupe::actor_system sys{w};
        server actors[10];
        for (auto& a : actors) a | troupe::finished_msg;
        sys.stop();
        for (auto& a : actors) CHECK(a.finished());
        CHECK(destroyed.load() == 0);
    });
    CHECK(destroyed.load() == 10);  // the last round's stack actors, at their scope exit
}

TEST_CASE("delete_msg destroys and frees heap actors") {
    on_workers([](std::size_t w) {
        destroyed = 0;
        troupe::actor_system sys{w};
        for (int i = 0; i < 10; ++i) *new server | troupe::delete_msg;
        sys.stop();
        CHECK(destroyed.load() == 10);
    });
}

TEST_CASE("destroy_msg runs the destructor only; the storage stays the caller's") {
    on_workers([](std::size_t w) {
        destroyed = 0;
        alignas(server) unsigned char storage[10][sizeof(server)];
        troupe::actor_system sys{w};
        server* s[10];
        for (int i = 0; i < 10; ++i) s[i] = ::new (storage[i]) server;
        for (auto* a : s) *a | troupe::destroy_msg;
        sys.stop();
        CHECK(destroyed.load() == 10);
        // The destructor's last write is still there: the memory was not freed.
        for (auto* a : s) CHECK(static_cast<payload*>(a)->val == 42);
    });
}

TEST_CASE("a poison pill can be overridden per actor type") {
    troupe::actor_system sys{2};
    overrider o;
    o | troupe::finished_msg;
    o | troupe::finished_msg;
    sys.stop();
    CHECK(o.pills == 2);
    CHECK(o.finished());
}
