// Remote send throughput: S sender actors on rank 0 stream small messages
// one way to a sink actor on rank 1, which acknowledges the last one.
// Run: mpirun -np 2 remote_throughput --n=N --senders=S
// Twins: bench/peers/mpi/throughput.cpp, bench/peers/caf/remote_throughput.cpp.
#include <memory>
#include <vector>

#include "../common/bench_util.hpp"
#include "troupe/actors.hpp"
#include "troupe/remote.hpp"

struct item : troupe::message {
    long v = 0;
};
TROUPE_REMOTE_MESSAGE(item, "bench.throughput.item", &item::v);
struct ack : troupe::message {
    long count = 0;
};
TROUPE_REMOTE_MESSAGE(ack, "bench.throughput.ack", &ack::count);

struct waiter : troupe::actor {
    troupe::future<long> got;
    troupe::allocation receive(ack& a) {
        got.fulfil(a.count);
        return troupe::Finished;
    }
};

struct sink : troupe::actor {
    troupe::remote::remote_ref<waiter> back;
    long expected = 0, count = 0, sum = 0;
    troupe::allocation receive(item& i) {
        sum += i.v;
        if (++count < expected) return troupe::Nodelete;
        ack a;
        a.count = count;
        back | a;
        return troupe::Finished;
    }
};

struct go : troupe::message {};
struct sender : troupe::actor {
    troupe::remote::remote_ref<sink> to;
    long n = 0;
    troupe::allocation receive(go&) {
        item it;
        for (long k = 0; k < n; ++k) {
            it.v = k;
            to | it;
        }
        return troupe::Finished;
    }
};

int main(int argc, char** argv) {
    troupe::remote::world w{argc, argv};
    if (w.size() != 2) bench::fail("run with mpirun -np 2");
    const long senders = bench::option(argc, argv, "senders", 1);
    const long n = bench::option(argc, argv, "n", 1000000) / senders * senders;
    troupe::actor_system sys{std::size_t(bench::option(argc, argv, "workers", 2))};
    waiter wt;
    sink sk;
    if (w.rank() == 0) {
        w.publish("waiter", wt);
        sk | troupe::finished_msg;
    } else {
        sk.expected = n;
        w.publish("sink", sk);
        wt | troupe::finished_msg;
    }
    w.barrier();
    if (w.rank() == 1) sk.back = w.lookup<waiter>(0, "waiter");
    w.barrier();
    if (w.rank() == 0) {
        auto to = w.lookup<sink>(1, "sink");
        std::vector<std::unique_ptr<sender>> ss;
        for (long s = 0; s < senders; ++s) {
            ss.push_back(std::make_unique<sender>());
            ss.back()->to = to;
            ss.back()->n = n / senders;
        }
        go g;
        const auto t0 = bench::clock::now();
        for (auto& s : ss) *s | g;
        if (wt.got.get() != n) bench::fail("lost messages");
        const double s = bench::seconds(t0, bench::clock::now());
        bench::result("remote_throughput", "troupe", "ops_per_s", double(n) / s,
                      ("senders=" + std::to_string(senders)).c_str());
        w.stop(sys);
    } else {
        w.stop(sys);
    }
}
