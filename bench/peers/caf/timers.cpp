// CAF 0.17 twin of bench/actors/timers.cpp: delayed_anon_send from main.
//  - actor_timer_schedule: N delayed messages one hour ahead: ns per
//    schedule and bytes of resident memory per pending one (CAF 0.17's
//    delayed_send returns no handle: there is no cancel to measure);
//  - actor_timer_fire: N delayed messages due within `spread` ms to
//    `targets` actors: messages fired and received per second.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <future>
#include <vector>

#include "caf_common.hpp"

using tick_atom = caf::atom_constant<caf::atom("tick")>;
using quit_atom = caf::atom_constant<caf::atom("quit")>;

namespace {
struct shared {
    std::atomic<long> total{0};
    long expect = 0;
    std::promise<void> all;
};

caf::behavior sink(caf::event_based_actor* self, shared* s) {
    return {[=](tick_atom) {
                if (s->total.fetch_add(1, std::memory_order_relaxed) + 1 == s->expect)
                    s->all.set_value();
            },
            [=](quit_atom) { self->quit(); }};
}

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

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
    caf::actor_system_config cfg;
    caf_bench::configure(cfg, argc, argv);
    const std::string params = caf_bench::params(argc, argv) + " n=" + std::to_string(n);
    shared far, near;
    far.expect = n + 1;  // never reached: these stay pending
    near.expect = n;
    {
        caf::actor_system system{cfg};
        std::vector<caf::actor> far_sinks, near_sinks;
        for (long i = 0; i < targets; ++i) {
            far_sinks.push_back(system.spawn(sink, &far));
            near_sinks.push_back(system.spawn(sink, &near));
        }
        // Warm the clock's thread outside the count.
        caf::delayed_anon_send(far_sinks[0], hours{1}, tick_atom::value);
        const long before = rss_kb();
        const double c0 = cpu_seconds();
        bench::stopwatch t;
        for (long i = 0; i < n; ++i)
            caf::delayed_anon_send(far_sinks[static_cast<std::size_t>(i % targets)],
                                   hours{1} + microseconds{i}, tick_atom::value);
        const double sched = t.seconds();
        const double cpu = cpu_seconds() - c0;
        const long after = rss_kb();
        bench::result("actor_timer_schedule", "caf", "ns_per_op", sched * 1e9 / double(n), params);
        bench::result("actor_timer_schedule", "caf", "cpu_ns_per_op", cpu * 1e9 / double(n),
                      params);
        bench::result("actor_timer_memory", "caf", "bytes_per_timer",
                      double(after - before) * 1024.0 / double(n), params);

        auto fired = near.all.get_future();
        bench::stopwatch f;
        for (long i = 0; i < n; ++i)
            caf::delayed_anon_send(near_sinks[static_cast<std::size_t>(i % targets)],
                                   microseconds{(i * spread_ms * 1000) / n}, tick_atom::value);
        fired.wait();
        const double fire = f.seconds();
        bench::result("actor_timer_fire", "caf", "ops_per_s", double(n) / fire,
                      caf_bench::params(argc, argv) + " n=" + std::to_string(n) +
                          " spread_ms=" + std::to_string(spread_ms));
        for (auto& a : far_sinks) caf::anon_send(a, quit_atom::value);
        for (auto& a : near_sinks) caf::anon_send(a, quit_atom::value);
        far_sinks.clear();
        near_sinks.clear();
        system.await_all_actors_done();
    }
}
