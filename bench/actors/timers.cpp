// Actor timers beside CAF's delayed_send (bench/peers/caf/timers.cpp).
//  - actor_timer_schedule: N one-shot timers (a small message each) armed
//    from main far in the future: ns per schedule, and the resident memory
//    they add, in bytes per pending timer (VmRSS before and after);
//  - actor_timer_cancel: then each is cancelled: ns per cancel (CAF 0.17's
//    delayed_send returns no handle: no twin row);
//  - actor_timer_fire: N timers due within `spread` ms, sent to `targets`
//    actors: timers fired and received per second (from the first schedule
//    to the last receive).
#include <chrono>
#include <cstdio>
#include <vector>

#include "troupe_bench.hpp"

namespace {
struct tick : troupe::message {};

struct sink : troupe::actor {
    long expect = 0;
    troupe::future<void>* all = nullptr;
    std::atomic<long>* total = nullptr;
    void receive(tick&) {
        if (total->fetch_add(1, std::memory_order_relaxed) + 1 == expect) all->fulfil();
    }
};

long rss_kb() {
    long kb = -1;
    if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
        char line[256];
        while (std::fgets(line, sizeof line, f))
            if (std::sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
        std::fclose(f);
    }
    return kb;
}
}  // namespace

int main(int argc, char** argv) {
    using namespace std::chrono;
    const long n = bench::option(argc, argv, "n", 1'000'000);
    const long spread_ms = bench::option(argc, argv, "spread", 200);
    const long targets = bench::option(argc, argv, "targets", 100);
    const troupe::executor_config cfg = bench::config(argc, argv);
    const std::string params =
        bench::params(static_cast<long>(cfg.workers), "n=" + std::to_string(n));
    troupe::actor_system sys{cfg};
    std::atomic<long> total{0};
    troupe::future<void> all;
    std::vector<sink> sinks(static_cast<std::size_t>(targets));
    for (auto& s : sinks) {
        s.all = &all;
        s.total = &total;
        s.expect = n;
    }
    {
        // Warm the timer service (its thread and heap) outside the count.
        auto w = troupe::send_after<tick>(sinks[0], hours{1});
        w.cancel();
    }
    std::vector<troupe::timer_handle> hs;
    hs.reserve(static_cast<std::size_t>(n));
    const long before = rss_kb();
    bench::stopwatch t;
    for (long i = 0; i < n; ++i)
        hs.push_back(troupe::send_after<tick>(sinks[static_cast<std::size_t>(i % targets)],
                                               hours{1} + microseconds{i}));
    const double sched = t.seconds();
    const long after = rss_kb();
    bench::result("actor_timer_schedule", "troupe", "ns_per_op", sched * 1e9 / double(n), params);
    // The handles' vector is the benchmark's, not the timers': 16 bytes each.
    const double per = (double(after - before) * 1024.0 - double(n) * sizeof(troupe::timer_handle)) /
                       double(n);
    bench::result("actor_timer_memory", "troupe", "bytes_per_timer", per, params);
    bench::stopwatch c;
    long cancelled = 0;
    for (auto& h : hs) cancelled += h.cancel();
    const double canc = c.seconds();
    if (cancelled != n) bench::fail("a timer was not cancelled");
    bench::result("actor_timer_cancel", "troupe", "ns_per_op", canc * 1e9 / double(n), params);
    hs.clear();

    // Fire: n timers due within spread_ms.
    bench::stopwatch f;
    for (long i = 0; i < n; ++i)
        (void)troupe::send_after<tick>(sinks[static_cast<std::size_t>(i % targets)],
                                       microseconds{(i * spread_ms * 1000) / n});
    all.get();
    const double fire = f.seconds();
    bench::result("actor_timer_fire", "troupe", "ops_per_s", double(n) / fire,
                  bench::params(static_cast<long>(cfg.workers),
                                "n=" + std::to_string(n) + " spread_ms=" + std::to_string(spread_ms)));
    for (auto& s : sinks) s | troupe::finished_msg;
    sys.stop();
}
