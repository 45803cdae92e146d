// FIFO per sender-receiver pair under load: every rank's senders (actors and
// the main thread) stream numbered messages to every rank's sink at once;
// each sink checks each sender's numbers arrive in order and counts them all.
#include <map>

#include "remote_fixture.hpp"

namespace remote = troupe::remote;

struct numbered : troupe::message {
    int rank = 0, sender = 0, seq = 0;
};
TROUPE_REMOTE_MESSAGE(numbered, "test.fifo.numbered", &numbered::rank, &numbered::sender, &numbered::seq);

constexpr int senders_per_rank = 4;  // actors; the main thread is sender 4
constexpr int per_sender = 2000;

struct sink : troupe::actor {
    long expected = 0, received = 0;
    std::map<std::pair<int, int>, int> next;  // (rank, sender) -> next seq
    long out_of_order = 0;
    troupe::allocation receive(numbered& m) {
        int& n = next[{m.rank, m.sender}];
        if (m.seq != n) ++out_of_order;
        n = m.seq + 1;
        return ++received == expected ? troupe::Finished : troupe::Nodelete;
    }
};

struct go : troupe::message {};

struct sender : troupe::actor {
    std::vector<remote::remote_ref<sink>>* sinks = nullptr;
    int rank = 0, index = 0;
    troupe::allocation receive(go&) {
        numbered m;
        m.rank = rank;
        m.sender = index;
        for (int s = 0; s < per_sender; ++s) {
            m.seq = s;
            for (auto& k : *sinks) k | m;  // encoded at once: m is reused
        }
        return troupe::Finished;
    }
};

TEST_CASE("FIFO per pair under load, every rank to every rank") {
    auto& w = remote_test::world();
    troupe::actor_system sys{2};
    sink mine;
    mine.expected = long{w.size()} * (senders_per_rank + 1) * per_sender;
    w.publish("fifo.sink", mine);
    w.barrier();
    std::vector<remote::remote_ref<sink>> sinks;
    for (int r = 0; r < w.size(); ++r) sinks.push_back(w.lookup<sink>(r, "fifo.sink"));
    std::vector<std::unique_ptr<sender>> actors;
    go kick;
    for (int i = 0; i < senders_per_rank; ++i) {
        actors.push_back(std::make_unique<sender>());
        actors.back()->sinks = &sinks;
        actors.back()->rank = w.rank();
        actors.back()->index = i;
        *actors.back() | kick;
    }
    numbered m;  // the main thread streams too (an external sender)
    m.rank = w.rank();
    m.sender = senders_per_rank;
    for (int s = 0; s < per_sender; ++s) {
        m.seq = s;
        for (auto& k : sinks) k.send(m);
    }
    w.stop(sys);
    CHECK(mine.finished());
    CHECK(mine.received == mine.expected);
    CHECK(mine.out_of_order == 0);
    CHECK(mine.next.size() == std::size_t(w.size()) * (senders_per_rank + 1));
    CHECK(remote_test::sum_over_ranks(mine.received) == long{w.size()} * mine.expected);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
