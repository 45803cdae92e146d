// Remote ping-pong: an actor on rank 0 and one on rank 1 bounce a small
// message; the time per round trip (remote_ping_pong). Then rank 0's main
// thread asks an actor on rank 1 `asks` times, one at a time, as a user
// would: mean, median and 99th percentile of the ask round trip
// (remote_ask, remote_ask_p50, remote_ask_p99).
// Run: mpirun -np 2 remote_ping_pong --n=N [--asks=M] (M defaults to N/5)
// With an even number of ranks, pairs (0, 1), (2, 3), ... do the same at
// once (ranks on shared cores); rank 0 reports.
// Twins: bench/peers/mpi/ping_pong.cpp (raw MPI, the transport's limit) and
// bench/peers/caf/remote_ping_pong.cpp (CAF 0.17 middleman over loopback).
#include <chrono>
#include <string>
#include <vector>

#include "../common/bench_util.hpp"
#include "troupe/actors.hpp"
#include "troupe/remote.hpp"

struct ball : troupe::message {
    long n = 0;
};
TROUPE_REMOTE_MESSAGE(ball, "bench.ping_pong.ball", &ball::n);

struct echo : troupe::request<long> {
    long v = 0;
};
TROUPE_REMOTE_MESSAGE(echo, "bench.ping_pong.echo", &echo::v);

struct server : troupe::actor {
    troupe::allocation receive(echo& q) {
        q.reply(q.v + 1);
        return troupe::Nodelete;
    }
};

struct player : troupe::actor {
    troupe::remote::remote_ref<player> peer;
    long limit = 0;
    troupe::future<>* done = nullptr;
    troupe::allocation receive(ball& b) {
        if (b.n >= limit) {
            if (done) done->fulfil();
            return troupe::Finished;
        }
        ball next;
        next.n = b.n + 1;
        peer | next;
        return next.n >= limit ? troupe::Finished
                               : troupe::Nodelete;  // the last ball ends the sender too
    }
};

int main(int argc, char** argv) {
    troupe::remote::world w{argc, argv};
    if (w.size() % 2 != 0) bench::fail("run with an even number of ranks (mpirun -np 2)");
    const int peer = w.rank() ^ 1;
    const bool lead = w.rank() % 2 == 0;
    // --binding=NAME (bench/remote/run.sh): how mpirun bound the ranks.
    const std::string tag =
        "ranks=" + std::to_string(w.size()) + " binding=" + bench::binding_label(argc, argv);
    const long n = bench::option(argc, argv, "n", 100000);
    const long asks = bench::option(argc, argv, "asks", std::max(n / 5, 1000L));
    troupe::actor_system sys{1};
    troupe::future<> done;
    player me;
    me.limit =
        2 * n - 1;  // rank 1 gets the even hits, rank 0 the odd: n round trips, the last to rank 0
    me.done = lead ? &done : nullptr;
    server srv;
    w.publish("player", me);
    w.publish("server", srv);
    w.barrier();
    me.peer = w.lookup<player>(peer, "player");
    const auto peer_srv = w.lookup<server>(peer, "server");
    w.barrier();
    if (lead) {
        const auto t0 = bench::clock::now();
        ball first;
        me.peer | first;
        done.get();
        const double s = bench::seconds(t0, bench::clock::now());
        if (w.rank() == 0)
            bench::result("remote_ping_pong", "troupe", "ns_per_op", s * 1e9 / double(n), tag);
    }
    w.barrier();
    if (lead) {
        for (long i = 0; i < asks / 10; ++i) {  // warm-up
            echo q;
            q.v = i;
            if (peer_srv.ask(q).get() != i + 1) bench::fail("wrong reply");
        }
        std::vector<double> ns(static_cast<std::size_t>(asks));
        for (long i = 0; i < asks; ++i) {
            echo q;
            q.v = i;
            const auto t0 = bench::clock::now();
            const long r = peer_srv.ask(q).get();
            ns[static_cast<std::size_t>(i)] = bench::seconds(t0, bench::clock::now()) * 1e9;
            if (r != i + 1) bench::fail("wrong reply");
        }
        if (w.rank() == 0) bench::latency_results("remote_ask", "troupe", ns, tag);
    }
    w.barrier();
    srv | troupe::finished_msg;
    w.stop(sys);
}
