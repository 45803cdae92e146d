// bench=sem_pingpong, system=boost_fiber: twin of bench/core/sem_pingpong.cpp.
// Two fibers on one kernel thread pass the turn back and forth; one op = one
// round trip. Boost.Fiber has no semaphore, so --prim picks the cheapest
// equivalent:
//   condvar (default): a counting semaphore from boost::fibers::mutex +
//                      condition_variable (the same shape as troupe's);
//   channel:           two unbuffered_channel<int> (rendezvous push/pop).
#include <boost/fiber/all.hpp>
#include <mutex>

#include "bench_util.hpp"

namespace {

class fiber_semaphore {
public:
    void release() {
        {
            std::lock_guard g{m_};
            ++count_;
        }
        cv_.notify_one();
    }
    void acquire() {
        std::unique_lock l{m_};
        cv_.wait(l, [this] { return count_ > 0; });
        --count_;
    }

private:
    boost::fibers::mutex m_;
    boost::fibers::condition_variable cv_;
    long count_ = 0;
};

template <class Send, class Receive, class Reply, class Await>
double ping_pong(long warmup, long rounds, long& seen, Send send, Receive receive, Reply reply,
                 Await await) {
    double ns = 0;
    boost::fibers::fiber pong{[&] {
        for (long i = 0; i < warmup + rounds; ++i) {
            receive();
            ++seen;
            reply();
        }
    }};
    boost::fibers::fiber ping{[&] {
        for (long i = 0; i < warmup; ++i) {
            send();
            await();
        }
        const auto t0 = bench::clock::now();
        for (long i = 0; i < rounds; ++i) {
            send();
            await();
        }
        const auto t1 = bench::clock::now();
        ns = bench::seconds(t0, t1) * 1e9 / static_cast<double>(rounds);
    }};
    ping.join();
    pong.join();
    return ns;
}

}  // namespace

int main(int argc, char** argv) {
    const long rounds = bench::option(argc, argv, "rounds", 2000000);
    const long warmup = rounds / 10 + 1;
    const std::string prim = bench::option_text(argc, argv, "prim", "condvar");
    long seen = 0;
    double ns = 0;
    if (prim == "condvar") {
        fiber_semaphore to_pong, to_ping;
        ns = ping_pong(
            warmup, rounds, seen, [&] { to_pong.release(); }, [&] { to_pong.acquire(); },
            [&] { to_ping.release(); }, [&] { to_ping.acquire(); });
    } else if (prim == "channel") {
        boost::fibers::unbuffered_channel<int> to_pong, to_ping;
        int v = 0;
        ns = ping_pong(
            warmup, rounds, seen, [&] { to_pong.push(1); }, [&] { to_pong.pop(v); },
            [&] { to_ping.push(1); }, [&] { to_ping.pop(v); });
    } else {
        bench::fail("sem_pingpong: --prim must be condvar or channel");
    }
    if (seen != warmup + rounds) bench::fail("sem_pingpong: lost a round");
    bench::result("sem_pingpong", "boost_fiber", "ns_per_op", ns);
}
