// Remote ping-pong: an actor on rank 0 and one on rank 1 bounce a small
// message; the time per round trip. Run: mpirun -np 2 remote_ping_pong --n=N
// Twins: bench/peers/mpi/ping_pong.cpp (raw MPI, the transport's limit) and
// bench/peers/caf/remote_ping_pong.cpp (CAF 0.17 middleman over loopback).
#include <chrono>

#include "../common/bench_util.hpp"
#include "troupe/actors.hpp"
#include "troupe/remote.hpp"

struct ball : troupe::message {
    long n = 0;
};
TROUPE_REMOTE_MESSAGE(ball, "bench.ping_pong.ball", &ball::n);

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
    if (w.size() != 2) bench::fail("run with mpirun -np 2");
    const long n = bench::option(argc, argv, "n", 100000);
    troupe::actor_system sys{1};
    troupe::future<> done;
    player me;
    me.limit =
        2 * n - 1;  // rank 1 gets the even hits, rank 0 the odd: n round trips, the last to rank 0
    me.done = w.rank() == 0 ? &done : nullptr;
    w.publish("player", me);
    w.barrier();
    me.peer = w.lookup<player>(1 - w.rank(), "player");
    w.barrier();
    if (w.rank() == 0) {
        const auto t0 = bench::clock::now();
        ball first;
        me.peer | first;
        done.get();
        const double s = bench::seconds(t0, bench::clock::now());
        bench::result("remote_ping_pong", "troupe", "ns_per_op", s * 1e9 / double(n), "ranks=2");
    }
    w.stop(sys);
}
