// bench=sem_pingpong, system=troupe: two user threads on ONE processor pass
// the turn back and forth through two semaphores. Reports ns_per_op, one op =
// one round trip (ping releases, pong acquires and releases back, ping
// acquires: two context switches).
//
// Twin: bench/peers/boost_fiber/sem_pingpong.cpp (two fibers on one thread).
#include <troupe/cluster.hpp>
#include <troupe/semaphore.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const long rounds = bench::option(argc, argv, "rounds", 2000000);
    const long warmup = rounds / 10 + 1;
    troupe::cluster pool{1};
    troupe::semaphore to_pong{0}, to_ping{0};
    double ns = 0;
    long seen = 0;
    troupe::thread pong{pool, [&] {
                            for (long i = 0; i < warmup + rounds; ++i) {
                                to_pong.acquire();
                                ++seen;
                                to_ping.release();
                            }
                        }};
    troupe::thread ping{pool, [&] {
                            for (long i = 0; i < warmup; ++i) {
                                to_pong.release();
                                to_ping.acquire();
                            }
                            const auto t0 = bench::clock::now();
                            for (long i = 0; i < rounds; ++i) {
                                to_pong.release();
                                to_ping.acquire();
                            }
                            const auto t1 = bench::clock::now();
                            ns = bench::seconds(t0, t1) * 1e9 / static_cast<double>(rounds);
                        }};
    ping.join();
    pong.join();
    if (seen != warmup + rounds) bench::fail("sem_pingpong: lost a round");
    bench::result("sem_pingpong", "troupe", "ns_per_op", ns);
}
