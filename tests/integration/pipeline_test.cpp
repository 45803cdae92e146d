// A pipeline that crosses modules both ways, at 1, 2 and 4 processors:
//
//   producer actors --(blocking inserts from behaviours)--> two lanes (channels)
//   consumer user threads: waituntil over a future (first), both lanes, and a
//     timeout; each item is acknowledged to the actor that made it (send<>)
//   producers report to a coordinator actor, which fulfils the `halfway`
//     future when half of them are done and closes both lanes (close() from a
//     behaviour) when all are; the consumers end on the lanes' close.
//
// Checked exactly: every item acknowledged exactly once to its producer,
// each producer's items seen in order by each consumer (channel FIFO per
// producer), the consumers' counts add up to the total, every consumer saw
// the future exactly once (it is fulfilled before the close and written
// first), no deadlock (watchdog), no heap block left behind (leak_check).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/actors.hpp"
#include "troupe/channel.hpp"
#include "troupe/future.hpp"
#include "troupe/thread.hpp"
#include "troupe/timeout.hpp"
#include "troupe/waituntil.hpp"

using namespace std::chrono_literals;
using troupe::channel_status;
using troupe_test::scaled;

namespace {

struct producer;

struct item {
    producer* from = nullptr;
    int origin = 0;  // the producer's index
    int seq = 0;     // the producer's numbering, from 0
};

using lane = troupe::channel<item>;

struct start : troupe::message {
    int count;
    explicit start(int n) : count(n) {}
};
struct ack : troupe::message {
    int seq;
    explicit ack(int s) : seq(s) {}
};
struct producer_done : troupe::message {
    producer_done() : troupe::message(troupe::Delete) {}
};
struct acks_query : troupe::request<std::vector<int>> {};

// Closes the lanes once every producer is done; fulfils `halfway` when half are.
struct coordinator : troupe::actor {
    coordinator(troupe::actor_system& s, lane* l0, lane* l1, troupe::future<int>& h, int producers)
        : troupe::actor(s), lanes{l0, l1}, halfway(h), expected(producers) {}
    lane* lanes[2];
    troupe::future<int>& halfway;
    int expected;
    int done = 0;
    troupe::allocation receive(producer_done&) {
        ++done;
        if (done == (expected + 1) / 2) halfway.fulfil(done);
        if (done == expected) {
            lanes[0]->close();  // non-blocking: consumers drain what is left
            lanes[1]->close();
        }
        return troupe::Nodelete;
    }
};

struct producer : troupe::actor {
    producer(troupe::actor_system& s, int index, lane& out, coordinator& co)
        : troupe::actor(s), index(index), out(out), co(co) {}
    int index;
    lane& out;
    coordinator& co;
    std::vector<int> acked;  // per item: acknowledgements received
    troupe::allocation receive(start& m) {
        acked.assign(static_cast<std::size_t>(m.count), 0);
        // Blocking inserts from a behaviour: the worker waits for the
        // consumers (user threads), which never wait for an actor.
        for (int k = 0; k < m.count; ++k) out << item{this, index, k};
        troupe::send<producer_done>(co);
        return troupe::Nodelete;
    }
    troupe::allocation receive(ack& a) {
        ++acked[static_cast<std::size_t>(a.seq)];
        return troupe::Nodelete;
    }
    troupe::allocation receive(acks_query& q) {
        q.reply(acked);
        return troupe::Nodelete;
    }
};

void run_pipeline(troupe::cluster& c, std::size_t workers, std::size_t capacity) {
    troupe_test::leak_check no_leaks;
    constexpr int producers = 4;
    constexpr int consumers = 3;
    const int per_producer = scaled(400, 5);

    troupe::actor_system sys{workers};
    lane lanes[2] = {lane{capacity, "lane 0"}, lane{capacity, "lane 1"}};
    troupe::future<int> halfway;
    coordinator co{sys, &lanes[0], &lanes[1], halfway, producers};
    std::vector<std::unique_ptr<producer>> ps;
    for (int p = 0; p < producers; ++p)
        ps.push_back(std::make_unique<producer>(sys, p, lanes[p % 2], co));

    std::atomic<long> consumed{0};
    std::atomic<int> saw_halfway{0};
    std::atomic<int> fifo_violations{0};
    std::vector<troupe::thread> threads;
    for (int k = 0; k < consumers; ++k)
        threads.emplace_back(c, [&] {
            std::vector<int> last(producers, -1);
            bool open[2] = {true, true};
            bool halfway_seen = false;
            long mine = 0;
            while (open[0] || open[1]) {
                item it;
                bool got = false;
                auto take = [&](int l) {
                    return [&, l](channel_status s) {
                        if (s == channel_status::closed) open[l] = false;
                        else got = true;
                    };
                };
                troupe::waituntil(
                    troupe::when(!halfway_seen, troupe::on(halfway,
                                                           [&] {
                                                               halfway_seen = true;
                                                               saw_halfway.fetch_add(1);
                                                           })) |
                    troupe::when(open[0], troupe::on(lanes[0].remove_into(it, troupe::report_close),
                                                     take(0))) |
                    troupe::when(open[1], troupe::on(lanes[1].remove_into(it, troupe::report_close),
                                                     take(1))) |
                    troupe::on(troupe::timeout(20ms)));  // idle: look again
                if (!got) continue;
                ++mine;
                if (it.seq <= last[it.origin]) fifo_violations.fetch_add(1);
                last[it.origin] = it.seq;
                troupe::send<ack>(*it.from, it.seq);  // reply to the actor that made it
            }
            consumed.fetch_add(mine);
        });

    // Main is an OS thread: it starts the producers and waits for the consumers.
    for (auto& p : ps) troupe::send<start>(*p, per_producer);
    for (auto& t : threads) t.join();

    CHECK(consumed.load() == long{producers} * per_producer);
    CHECK(saw_halfway.load() == consumers);
    CHECK(fifo_violations.load() == 0);
    CHECK(halfway.get() == (producers + 1) / 2);
    for (auto& p : ps) {
        CAPTURE(p->index);
        acks_query q;
        // Every ack was sent before the consumers were joined, so it is
        // ahead of this query in the producer's mailbox.
        const std::vector<int> acked = troupe::ask(*p, q).get();
        int once = 0;
        for (int n : acked) once += n == 1;
        CHECK(once == per_producer);
    }
    for (auto& p : ps) *p | troupe::finished_msg;
    co | troupe::finished_msg;
    sys.stop();
}

}  // namespace

TEST_CASE("pipeline: actors -> channels -> waituntil consumers -> actors, buffered lanes") {
    troupe_test::on_processors([](troupe::cluster& c) { run_pipeline(c, 2, 8); });
}

TEST_CASE("pipeline: rendezvous lanes, one and four workers") {
    troupe_test::on_processors([](troupe::cluster& c) {
        run_pipeline(c, 1, 0);
        run_pipeline(c, 4, 0);
    });
}
