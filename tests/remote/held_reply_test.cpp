// Replies that do not fit in the unsent batch for their rank: a server
// answers several large requests at once, so that one progress pass finds
// them all ready while the first (a direct send past MPI's eager limit) is
// still in flight and the batch fills. The replies that do not fit wait
// for room; none is dropped or reported as an error. The batch limit is
// lowered (a test hook) so that this takes megabytes, not gigabytes.
#include <vector>

#include "remote_fixture.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
namespace remote = troupe::remote;

struct big : troupe::request<std::vector<char>> {
    long n = 0;
};
TROUPE_REMOTE_MESSAGE(big, "test.held.big", &big::n);
struct release : troupe::message {};
TROUPE_REMOTE_MESSAGE(release, "test.held.release");

namespace {

constexpr std::size_t limit = 2 << 20;               // the batch limit (2 MiB)
constexpr std::size_t reply_bytes = limit * 7 / 10;  // 0.7 of it, as 0.7 of 2 GiB
constexpr int requests = 4;

// Holds the requests and answers them all in one behaviour on release.
struct server : troupe::actor {
    std::vector<big*> held;
    troupe::allocation receive(big& q) {
        q.defer();
        held.push_back(&q);
        return troupe::Nodelete;
    }
    troupe::allocation receive(release&) {
        for (big* q : held) q->reply(std::vector<char>(reply_bytes, static_cast<char>(q->n)));
        held.clear();
        return troupe::Nodelete;
    }
};

}  // namespace

TEST_CASE("replies over the unsent batch's limit wait for room and all arrive") {
    remote::world& w = remote_test::world();
    remote_test::clear_network_errors();
    w.set_batch_limit_for_test(limit);
    int arrived = 0, right = 0;
    {
        troupe::actor_system sys{2};
        server s;
        w.publish("held.server." + std::to_string(w.rank()), s);
        w.barrier();
        const int n = (w.rank() + 1) % w.size();
        auto next = w.lookup<server>(n, "held.server." + std::to_string(n));
        std::vector<big> qs(requests);
        for (int i = 0; i < requests; ++i) {
            qs[i].n = i + 1;
            next.ask(qs[i]);
        }
        next | release{};  // after the requests (per-pair FIFO)
        for (big& q : qs) {
            // Bounded: a lost reply would leave this waiting forever.
            bool got = false;
            troupe::waituntil(troupe::on(q.result(), [&] { got = true; }) |
                              troupe::on(troupe::timeout(20s), [] {}));
            if (!got) continue;
            ++arrived;
            const std::vector<char>& v = q.result().get();
            if (v.size() == reply_bytes && v.front() == static_cast<char>(q.n) &&
                v.back() == static_cast<char>(q.n))
                ++right;
        }
        w.barrier();
        s | troupe::finished_msg;
        w.stop(sys);
    }
    w.set_batch_limit_for_test(0);  // the default again
    CHECK(arrived == requests);
    CHECK(right == requests);
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
