// bench=sem_uncontended, system=std: twin of bench/core/sem_uncontended.cpp
// with std::counting_semaphore on the main OS thread. Reports ns_per_op
// (release + acquire).
#include <semaphore>
#include <string>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    const bench::idle_thread multi_threaded;  // see bench_util.hpp: same path on both sides
    const long iters = bench::option(argc, argv, "iters", 20000000);
    std::counting_semaphore<> s{0};
    const double ns = bench::ns_per_op(iters, [&] {
        s.release();
        s.acquire();
    });
    if (s.try_acquire()) bench::fail("sem_uncontended: units created");
    bench::result("sem_uncontended", "std", "ns_per_op", ns, "ctx=os");
}
