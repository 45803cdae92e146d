// Dynamic sends: an actor and a message allocated per send, freed by Delete
// (Cforall test "dynamic").
#include <atomic>

#include "actor_fixture.hpp"

using troupe_test::on_workers;
using troupe_test::scaled;

namespace {

std::atomic<long> actors_destroyed{0}, messages_destroyed{0};
long Times = 0;
std::atomic<long> last_count{0};

struct hop_msg : troupe::message {
    long count;
    explicit hop_msg(long c) : message(troupe::Delete), count(c) {}
    ~hop_msg() override { messages_destroyed.fetch_add(1, std::memory_order_relaxed); }
};

struct hop_actor : troupe::actor {
    ~hop_actor() override { actors_destroyed.fetch_add(1, std::memory_order_relaxed); }
    troupe::allocation receive(hop_msg& m) {
        if (m.count >= Times) {
            last_count.store(m.count, std::memory_order_relaxed);
            return troupe::Delete;
        }
        // The successor exists before this actor returns Delete, so the live
        // count never reaches zero early.
        auto* next = new hop_actor;
        auto* msg = new hop_msg{m.count + 1};
        *next | *msg;
        return troupe::Delete;
    }
};

}  // namespace

TEST_CASE("a chain of heap actors and Delete messages: every one freed exactly once") {
    on_workers([](std::size_t w) {
        Times = scaled(100000L);
        actors_destroyed = 0;
        messages_destroyed = 0;
        troupe::actor_system sys{w};
        auto* first = new hop_actor;
        auto* msg = new hop_msg{1};
        *first | *msg;
        sys.stop();
        CHECK(last_count.load() == Times);
        CHECK(actors_destroyed.load() == Times);
        CHECK(messages_destroyed.load() == Times);
        CHECK(sys.live_actors() == 0);
    });
}

TEST_CASE("many independent chains at once") {
    on_workers([](std::size_t w) {
        Times = scaled(20000L);
        actors_destroyed = 0;
        messages_destroyed = 0;
        troupe::actor_system sys{w};
        constexpr int chains = 16;
        for (int c = 0; c < chains; ++c) {
            auto* a = new hop_actor;
            auto* m = new hop_msg{1};
            *a | *m;
        }
        sys.stop();
        CHECK(actors_destroyed.load() == chains * Times);
        CHECK(messages_destroyed.load() == chains * Times);
    });
}
