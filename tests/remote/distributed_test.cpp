// A distributed executor: groups of worker actors spanning every rank, fed
// by every rank; each work item produces a result sent to a collector on
// rank 0. Every message is counted: work items per worker, results, totals.
#include "remote_fixture.hpp"

namespace remote = troupe::remote;

constexpr int workers_per_rank = 8;
constexpr int items_per_pair = 50;  // from each rank to each worker

struct item : troupe::message {
    long value = 0;
};
TROUPE_REMOTE_MESSAGE(item, "test.dist.item", &item::value);
struct result : troupe::message {
    long value = 0;
    int worker_rank = 0;
};
TROUPE_REMOTE_MESSAGE(result, "test.dist.result", &result::value, &result::worker_rank);

struct collector : troupe::actor {
    long expected = 0, count = 0, sum = 0;
    std::vector<long> per_rank;
    troupe::allocation receive(result& r) {
        ++count;
        sum += r.value;
        per_rank.at(std::size_t(r.worker_rank))++;
        return count == expected ? troupe::Finished : troupe::Nodelete;
    }
};

struct worker : troupe::actor {
    remote::remote_ref<collector> sink;
    int rank = 0;
    long expected = 0, count = 0;
    troupe::allocation receive(item& i) {
        result r;
        r.value = i.value * 2;
        r.worker_rank = rank;
        sink | r;
        return ++count == expected ? troupe::Finished : troupe::Nodelete;
    }
};

TEST_CASE("actor groups spanning ranks, total message counts") {
    auto& w = remote_test::world();
    troupe::actor_system sys{2};
    const long ranks = w.size();
    collector c;
    if (w.rank() == 0) {
        c.expected = ranks * ranks * workers_per_rank * items_per_pair;
        c.per_rank.assign(std::size_t(ranks), 0);
        w.publish("dist.collector", c);
    } else {
        c | troupe::finished_msg;  // only rank 0's collector is used
    }
    std::vector<std::unique_ptr<worker>> mine;
    for (int i = 0; i < workers_per_rank; ++i) {
        mine.push_back(std::make_unique<worker>());
        mine.back()->rank = w.rank();
        mine.back()->expected = ranks * items_per_pair;
        w.publish("dist.worker." + std::to_string(i), *mine.back());
    }
    w.barrier();
    auto sink = w.lookup<collector>(0, "dist.collector");
    for (auto& m : mine) m->sink = sink;
    std::vector<remote::remote_ref<worker>> group;  // every worker of every rank
    for (int r = 0; r < w.size(); ++r)
        for (int i = 0; i < workers_per_rank; ++i)
            group.push_back(w.lookup<worker>(r, "dist.worker." + std::to_string(i)));
    w.barrier();  // everyone's workers know the collector before items fly
    long sent_value = 0;
    for (int k = 0; k < items_per_pair; ++k)
        for (auto& g : group) {
            item it;
            it.value = w.rank() * 1000000L + k;
            sent_value += it.value;
            g | it;
        }
    w.stop(sys);
    for (auto& m : mine) CHECK(m->count == m->expected);
    const long all_sent = remote_test::sum_over_ranks(sent_value);
    if (w.rank() == 0) {
        CHECK(c.finished());
        CHECK(c.count == c.expected);
        CHECK(c.sum == 2 * all_sent);
        for (long n : c.per_rank) CHECK(n == ranks * workers_per_rank * items_per_pair);
    }
    for (auto& e : remote_test::network_errors()) FAIL_CHECK(e);
}
