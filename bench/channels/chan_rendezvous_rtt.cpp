// bench=chan_rendezvous_rtt, system=troupe: two user threads ping-pong an
// int through two capacity-0 channels; one op = one round trip (two
// rendezvous). --processors 1: both on one processor (pure switch cost);
// 2: typically one each (cross-processor wake).
//
// Twins: bench/peers/go/chan_rendezvous_rtt.go,
//        bench/peers/boost_fiber/chan_rendezvous_rtt.cpp.
#include <string>

#include <troupe/channel.hpp>
#include <troupe/cluster.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const long rounds = bench::option(argc, argv, "rounds", 1000000);
    const long procs = bench::option(argc, argv, "processors", 1);
    const long warmup = rounds / 10 + 1;
    troupe::cluster pool{static_cast<std::size_t>(procs)};
    troupe::channel<long> to_pong{0}, to_ping{0};
    double ns = 0;
    long last = -1;
    troupe::thread pong{pool, [&] {
                            for (long i = 0; i < warmup + rounds; ++i)
                                to_ping.insert(to_pong.remove() + 1);
                        }};
    troupe::thread ping{pool, [&] {
                            long v = 0;
                            for (long i = 0; i < warmup; ++i) {
                                to_pong.insert(v);
                                v = to_ping.remove();
                            }
                            const auto t0 = bench::clock::now();
                            for (long i = 0; i < rounds; ++i) {
                                to_pong.insert(v);
                                v = to_ping.remove();
                            }
                            const auto t1 = bench::clock::now();
                            ns = bench::seconds(t0, t1) * 1e9 / static_cast<double>(rounds);
                            last = v;
                        }};
    ping.join();
    pong.join();
    if (last != warmup + rounds) bench::fail("chan_rendezvous_rtt: lost a round");
    bench::result("chan_rendezvous_rtt", "troupe", "ns_per_op", ns,
                  "processors=" + std::to_string(procs));
}
