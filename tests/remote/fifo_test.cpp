// FIFO per sender-receiver pair under load: every rank's senders (actors and
// the main thread) stream numbered messages to every rank's sink at once;
// each sink checks each sender's numbers arrive in order and counts them all.
#include <map>
#include <vector>

#include "remote_fixture.hpp"

namespace remote = troupe::remote;

struct numbered : troupe::message {
    int rank = 0, sender = 0, seq = 0;
};
TROUPE_REMOTE_MESSAGE(numbered, "test.fifo.numbered", &numbered::rank, &numbered::sender,
                      &numbered::seq);

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

// Large messages (above MPI's eager limit: a direct send from the sending
// thread does not complete at once, so the engine completes it and later
// frames go through the outbox meanwhile) mixed with small ones: order and
// contents per pair still hold.
struct blob : troupe::message {
    int rank = 0, sender = 0, seq = 0;
    std::vector<unsigned char> data;
};
TROUPE_REMOTE_MESSAGE(blob, "test.fifo.blob", &blob::rank, &blob::sender, &blob::seq, &blob::data);

constexpr int blobs_per_sender = 150;
constexpr std::size_t big_blob = 96 * 1024;

static void fill_blob(blob& b) {
    b.data.assign(b.seq % 10 == 3 ? big_blob : std::size_t(b.seq % 7),
                  static_cast<unsigned char>(b.seq * 31 + b.sender));
}

struct blob_sink : troupe::actor {
    long expected = 0, received = 0, out_of_order = 0, corrupt = 0;
    std::map<std::pair<int, int>, int> next;
    troupe::allocation receive(blob& m) {
        int& n = next[{m.rank, m.sender}];
        if (m.seq != n) ++out_of_order;
        n = m.seq + 1;
        blob want;
        want.sender = m.sender;
        want.seq = m.seq;
        fill_blob(want);
        if (m.data != want.data) ++corrupt;
        return ++received == expected ? troupe::Finished : troupe::Nodelete;
    }
};

struct blob_sender : troupe::actor {
    std::vector<remote::remote_ref<blob_sink>>* sinks = nullptr;
    int rank = 0;
    troupe::allocation receive(go&) {
        blob m;
        m.rank = rank;
        m.sender = 0;
        for (int s = 0; s < blobs_per_sender; ++s) {
            m.seq = s;
            fill_blob(m);
            for (auto& k : *sinks) k | m;
        }
        return troupe::Finished;
    }
};

TEST_CASE("FIFO per pair with large and small messages mixed") {
    auto& w = remote_test::world();
    troupe::actor_system sys{2};
    blob_sink mine;
    mine.expected = long{w.size()} * 2 * blobs_per_sender;  // an actor and the main thread per rank
    w.publish("fifo.blob_sink", mine);
    w.barrier();
    std::vector<remote::remote_ref<blob_sink>> sinks;
    for (int r = 0; r < w.size(); ++r) sinks.push_back(w.lookup<blob_sink>(r, "fifo.blob_sink"));
    blob_sender a;
    a.sinks = &sinks;
    a.rank = w.rank();
    go kick;
    a | kick;
    blob m;
    m.rank = w.rank();
    m.sender = 1;
    for (int s = 0; s < blobs_per_sender; ++s) {
        m.seq = s;
        fill_blob(m);
        for (auto& k : sinks) k | m;
    }
    w.stop(sys);
    CHECK(mine.finished());
    CHECK(mine.received == mine.expected);
    CHECK(mine.out_of_order == 0);
    CHECK(mine.corrupt == 0);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
