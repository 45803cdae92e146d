// Remote sends from many troupe user threads sharing one processor (one
// kernel thread) while OS threads contend for the same outbox. A sender's
// frame is built in its kernel thread's scratch buffer; before the fix, a
// user thread that met a busy outbox lock yielded its processor (the
// spinlock's slow path), another user thread on that kernel thread built its
// own frame in the same buffer, and the first then shipped the second's frame:
// one message twice, its own never (under TSan: remote asks that hung).
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "remote_fixture.hpp"
#include "troupe/cluster.hpp"
#include "troupe/thread.hpp"

namespace remote = troupe::remote;

struct tagged : troupe::message {
    int rank = 0, sender = 0, seq = 0;
};
TROUPE_REMOTE_MESSAGE(tagged, "test.fibers.tagged", &tagged::rank, &tagged::sender, &tagged::seq);

constexpr int fibers = 8, os_threads = 3, per_sender = 1000;

struct tally : troupe::actor {
    long expected = 0, received = 0, out_of_order = 0;
    std::map<std::pair<int, int>, int> next;  // (rank, sender) -> next seq
    troupe::allocation receive(tagged& m) {
        int& n = next[{m.rank, m.sender}];
        if (m.seq != n) ++out_of_order;
        n = m.seq + 1;
        return ++received == expected ? troupe::Finished : troupe::Nodelete;
    }
};

TEST_CASE("sends from user threads sharing a kernel thread, outbox contended") {
    auto& w = remote_test::world();
    troupe::actor_system sys{1};
    tally mine;
    mine.expected = long{fibers + os_threads} * per_sender;  // from the previous rank
    w.publish("fibers.tally", mine);
    w.barrier();
    const int to = (w.rank() + 1) % w.size();
    auto far = w.lookup<tally>(to, "fibers.tally");
    auto stream = [&](int sender) {
        tagged m;
        m.rank = w.rank();
        m.sender = sender;
        for (int s = 0; s < per_sender; ++s) {
            m.seq = s;
            far | m;
        }
    };
    {
        troupe::cluster c{1};  // every user thread on one kernel thread
        std::vector<troupe::thread> ts;
        std::vector<std::thread> os;
        for (int i = 0; i < os_threads; ++i) os.emplace_back(stream, fibers + i);
        for (int i = 0; i < fibers; ++i) ts.emplace_back(c, [&, i] { stream(i); });
        for (auto& t : ts) t.join();
        for (auto& t : os) t.join();
    }
    // Bounded: a lost message must fail the test, not hang it.
    CHECK(w.stop_for(sys, std::chrono::seconds(30)).finished);
    CHECK(mine.finished());
    CHECK(mine.received == mine.expected);
    CHECK(mine.out_of_order == 0);
    CHECK(mine.next.size() == std::size_t(fibers + os_threads));
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
