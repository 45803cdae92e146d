// bench=lock_uncontended, system=std: twin of
// bench/core/lock_uncontended.cpp with std::mutex on the main OS thread.
// Reports ns_per_op (lock + increment + unlock).
#include <mutex>
#include <string>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const bench::idle_thread multi_threaded;  // see bench_util.hpp: same path on both sides
    const long iters = bench::option(argc, argv, "iters", 20000000);
    std::mutex m;
    long counter = 0;
    const double ns = bench::ns_per_op(iters, [&] {
        m.lock();
        ++counter;
        m.unlock();
    });
    if (counter != iters + iters / 10 + 1) bench::fail("lock_uncontended: lost an increment");
    bench::result("lock_uncontended", "std", "ns_per_op", ns, "ctx=os");
}
