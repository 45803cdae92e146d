// CPU used by an idle rank (world, progress engine and actor system up,
// no traffic), as a percentage of one core. Run: mpirun -np 2 remote_idle
#include <sys/resource.h>

#include <chrono>
#include <string>
#include <thread>

#include "../common/bench_util.hpp"
#include "troupe/actors.hpp"
#include "troupe/remote.hpp"

static double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

int main(int argc, char** argv) {
    troupe::remote::world w{argc, argv};
    const long ms = bench::option(argc, argv, "ms", 3000);
    troupe::actor_system sys{2};
    w.barrier();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the engine back off
    const double c0 = cpu_seconds();
    const auto t0 = bench::clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    const double pct = 100.0 * (cpu_seconds() - c0) / bench::seconds(t0, bench::clock::now());
    if (w.rank() == 0)
        bench::result("remote_idle", "troupe", "cpu_percent", pct,
                      "ranks=" + std::to_string(w.size()));
    w.stop(sys);
}
