// Actor timers beside CAF's delayed_send (bench/peers/caf/timers.cpp).
//  - actor_timer_schedule: N one-shot timers (a small message each) armed
//    from main far in the future: ns per schedule, and the resident memory
//    they add, in bytes per pending timer (VmRSS before and after);
//  - actor_timer_cancel: then each is cancelled: ns per cancel (CAF 0.17's
//    delayed_send returns no handle: no twin row), in random order and
//    earliest first; actor_timer_memory order=all_cancelled: the resident
//    memory once all are cancelled (cancelled entries the heap has not
//    dropped yet still hold their block);
//  - actor_timer_churn: with N pending, N rounds of cancelling a random
//    one and scheduling a replacement (a timeout cancelled by its reply):
//    ns per schedule plus cancel, and the resident memory per pending
//    timer afterwards (actor_timer_memory order=churn);
//  - actor_timer_cancel_floor: the memory traffic any cancel in random
//    order pays here, without timers: the same walk over N 16-byte handles
//    to N 48-byte blocks, one compare-and-swap on each;
//  - actor_timer_fire: N timers due within `spread` ms, sent to `targets`
//    actors: timers fired and received per second (from the first schedule
//    to the last receive).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <random>
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

// CPU seconds of this process (the machine may be shared: wall time then
// counts the time others ran; the schedule and cancel loops run on main
// while every other thread sleeps, so this is their cost).
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
    const troupe::actor_system_config cfg = bench::config(argc, argv);
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
    // Schedules n timers an hour ahead (in deadline order); returns seconds.
    double cpu = 0;  // of the last schedule or cancel
    auto schedule = [&] {
        hs.clear();
        const double c0 = cpu_seconds();
        bench::stopwatch t;
        for (long i = 0; i < n; ++i)
            hs.push_back(troupe::send_after<tick>(sinks[static_cast<std::size_t>(i % targets)],
                                                  hours{1} + microseconds{i}));
        const double s = t.seconds();
        cpu = cpu_seconds() - c0;
        return s;
    };
    // Cancels them in `order`; returns seconds.
    auto cancel = [&](const std::vector<std::size_t>& order) {
        const double c0 = cpu_seconds();
        bench::stopwatch c;
        long cancelled = 0;
        for (std::size_t i : order) cancelled += hs[i].cancel();
        const double s = c.seconds();
        cpu = cpu_seconds() - c0;
        if (cancelled != n) bench::fail("a timer was not cancelled");
        return s;
    };
    std::vector<std::size_t> order(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937_64{42});

    const long before = rss_kb();
    const double sched = schedule();
    const long after = rss_kb();
    bench::result("actor_timer_schedule", "troupe", "ns_per_op", sched * 1e9 / double(n), params);
    bench::result("actor_timer_schedule", "troupe", "cpu_ns_per_op", cpu * 1e9 / double(n), params);
    // The handles' vector is the benchmark's, not the timers': 16 bytes each.
    const double per =
        (double(after - before) * 1024.0 - double(n) * sizeof(troupe::timer_handle)) / double(n);
    bench::result("actor_timer_memory", "troupe", "bytes_per_timer", per, params);
    // Cancelled in random order (a timeout cancelled by its reply), then,
    // after scheduling again, earliest first: each cancel removes the heap's
    // root, the binary heap's worst case.
    bench::result("actor_timer_cancel", "troupe", "ns_per_op", cancel(order) * 1e9 / double(n),
                  params + " order=random");
    bench::result("actor_timer_cancel", "troupe", "cpu_ns_per_op", cpu * 1e9 / double(n),
                  params + " order=random");
    auto bytes_per = [&] {
        return (double(rss_kb() - before) * 1024.0 - double(n) * sizeof(troupe::timer_handle)) /
               double(n);
    };
    bench::result("actor_timer_memory", "troupe", "bytes_per_timer", bytes_per(),
                  params + " order=all_cancelled");

    // Churn: n pending, n times cancel a random one and schedule its
    // replacement (a later deadline, so the heap keeps turning over).
    schedule();
    {
        std::mt19937_64 rng{7};
        const double c0 = cpu_seconds();
        bench::stopwatch t;
        for (long i = 0; i < n; ++i) {
            const std::size_t k = rng() % static_cast<std::size_t>(n);
            if (!hs[k].cancel()) bench::fail("a churned timer was not cancelled");
            hs[k] = troupe::send_after<tick>(sinks[k % static_cast<std::size_t>(targets)],
                                             hours{1} + microseconds{n + i});
        }
        const double s = t.seconds();
        cpu = cpu_seconds() - c0;
        bench::result("actor_timer_churn", "troupe", "ns_per_op", s * 1e9 / double(n),
                      params + " op=cancel+schedule");
        bench::result("actor_timer_churn", "troupe", "cpu_ns_per_op", cpu * 1e9 / double(n),
                      params + " op=cancel+schedule");
        bench::result("actor_timer_memory", "troupe", "bytes_per_timer", bytes_per(),
                      params + " order=churn");
    }
    for (auto& h : hs) h.cancel();

    schedule();
    std::vector<std::size_t> sorted(order.size());
    for (std::size_t i = 0; i < sorted.size(); ++i) sorted[i] = i;
    bench::result("actor_timer_cancel", "troupe", "ns_per_op", cancel(sorted) * 1e9 / double(n),
                  params + " order=earliest_first");
    bench::result("actor_timer_cancel", "troupe", "cpu_ns_per_op", cpu * 1e9 / double(n),
                  params + " order=earliest_first");
    hs.clear();

    {
        // The floor: what the random walk itself costs (two dependent cache
        // misses, the second under a locked instruction).
        struct block {
            char payload[40];
            std::atomic<std::uint32_t> state{0};
        };
        struct handle {
            block* b;
            bool periodic;
        };
        std::vector<handle> bs(static_cast<std::size_t>(n));
        for (auto& h : bs) h.b = new block;
        const double c0 = cpu_seconds();
        bench::stopwatch t;
        long won = 0;
        for (std::size_t i : order) {
            std::uint32_t armed = 0;
            won += bs[i].b->state.compare_exchange_strong(armed, 4, std::memory_order_acq_rel);
        }
        const double s = t.seconds();
        cpu = cpu_seconds() - c0;
        if (won != n) bench::fail("floor walk");
        bench::result("actor_timer_cancel_floor", "troupe", "ns_per_op", s * 1e9 / double(n),
                      params + " order=random");
        bench::result("actor_timer_cancel_floor", "troupe", "cpu_ns_per_op", cpu * 1e9 / double(n),
                      params + " order=random");
        for (auto& h : bs) delete h.b;
    }

    // Fire: n timers due within spread_ms.
    bench::stopwatch f;
    for (long i = 0; i < n; ++i)
        (void)troupe::send_after<tick>(sinks[static_cast<std::size_t>(i % targets)],
                                       microseconds{(i * spread_ms * 1000) / n});
    all.get();
    const double fire = f.seconds();
    bench::result(
        "actor_timer_fire", "troupe", "ops_per_s", double(n) / fire,
        bench::params(static_cast<long>(cfg.workers),
                      "n=" + std::to_string(n) + " spread_ms=" + std::to_string(spread_ms)));
    for (auto& s : sinks) s | troupe::finished_msg;
    sys.stop();
}
