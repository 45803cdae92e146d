// bench=thread_create_join, system=troupe: one user thread created and joined
// at a time, from inside a user thread on a 1-processor cluster. Reports
// ns_per_op, one op = construct troupe::thread + join.
//
// Twins: bench/peers/boost_fiber/thread_create_join.cpp (a fiber on one
// thread), bench/peers/std/thread_create_join.cpp (std::thread).
#include <troupe/cluster.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const long iters = bench::option(argc, argv, "iters", 1000000);
    troupe::cluster pool{1};
    double ns = 0;
    long ran = 0;
    troupe::thread driver{pool, [&] {
                              auto once = [&] {
                                  troupe::thread t{[&ran] { ++ran; }};
                                  t.join();
                              };
                              for (long i = 0; i < iters / 10 + 1; ++i)
                                  once();  // warm the stack pool and caches
                              const auto t0 = bench::clock::now();
                              for (long i = 0; i < iters; ++i) once();
                              const auto t1 = bench::clock::now();
                              ns = bench::seconds(t0, t1) * 1e9 / static_cast<double>(iters);
                          }};
    driver.join();
    if (ran != iters + iters / 10 + 1) bench::fail("thread_create_join: a thread did not run");
    bench::result("thread_create_join", "troupe", "ns_per_op", ns);
}
