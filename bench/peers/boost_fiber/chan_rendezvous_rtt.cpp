// bench=chan_rendezvous_rtt, system=boost_fiber: twin of
// bench/channels/chan_rendezvous_rtt.cpp. Two fibers ping-pong an int
// through two unbuffered_channel<long>; one op = one round trip.
// --processors 1: both fibers on one thread; 2: a work_stealing scheduler
// on two threads (idle threads suspend), ping started on the main thread
// and pong on the other (as troupe's round-robin placement does).
#include <boost/fiber/all.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"

namespace bf = boost::fibers;

int main(int argc, char** argv) {
    const long rounds = bench::option(argc, argv, "rounds", 1000000);
    const auto threads = static_cast<std::uint32_t>(bench::option(argc, argv, "processors", 1));
    // --suspend=0: idle threads spin instead of sleeping on a condition.
    const bool suspend = bench::option(argc, argv, "suspend", 1) != 0;
    const long warmup = rounds / 10 + 1;

    bf::unbuffered_channel<long> to_pong, to_ping;
    double ns = 0;
    long last = -1;
    bool pong_done = false;
    bf::mutex done_mutex;
    bf::condition_variable done_cv;
    auto pong = [&] {
        for (long i = 0; i < warmup + rounds; ++i) to_ping.push(to_pong.value_pop() + 1);
        std::lock_guard g{done_mutex};
        pong_done = true;
        done_cv.notify_all();
    };
    // Every thread's main fiber waits (fiber-aware) for pong before its
    // thread may block: a blocked thread runs none of the fibers
    // work_stealing may have moved to it.
    auto wait_pong = [&] {
        std::unique_lock l{done_mutex};
        done_cv.wait(l, [&] { return pong_done; });
    };
    bf::barrier ready{threads};
    std::vector<std::thread> helpers;
    if (threads > 1) {
        for (std::uint32_t i = 1; i < threads; ++i)
            helpers.emplace_back([&, i] {
                bf::use_scheduling_algorithm<bf::algo::work_stealing>(threads, suspend);
                ready.wait();
                if (i == 1) bf::fiber{pong}.detach();
                wait_pong();
            });
        bf::use_scheduling_algorithm<bf::algo::work_stealing>(threads, suspend);
        ready.wait();
    } else {
        bf::fiber{pong}.detach();
    }
    bf::fiber ping{[&] {
        long v = 0;
        for (long i = 0; i < warmup; ++i) {
            to_pong.push(v);
            v = to_ping.value_pop();
        }
        const auto t0 = bench::clock::now();
        for (long i = 0; i < rounds; ++i) {
            to_pong.push(v);
            v = to_ping.value_pop();
        }
        ns = bench::seconds(t0, bench::clock::now()) * 1e9 / static_cast<double>(rounds);
        last = v;
    }};
    ping.join();
    wait_pong();
    for (auto& t : helpers) t.join();
    if (last != warmup + rounds) bench::fail("chan_rendezvous_rtt: lost a round");
    bench::result("chan_rendezvous_rtt", "boost_fiber", "ns_per_op", ns,
                  "processors=" + std::to_string(threads));
}
