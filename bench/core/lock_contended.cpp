// bench=lock_contended (--lock=blocking: troupe::blocking_lock, FIFO
// hand-off) and bench=lock_contended_barging (--lock=barging:
// troupe::barging_lock, Go's two modes), system=troupe: two threads hammer
// one lock with a tiny critical section for a fixed duration. Reports
// ns_per_op = elapsed time / total acquisitions (both threads), and the
// wait of every acquisition as wait_p50_ns, wait_p99_ns, wait_max_ns
// (bench/common/wait_stats.hpp, timed_lock: zero for one whose first
// try_lock succeeds, else the cycle counter around lock(); the twins
// measure the same way).
// --ctx=os: two OS threads (std::thread); --ctx=user: two user threads on a
// 2-processor cluster. --ms: duration in milliseconds. --waits=0: no
// cycle-counter reads and no wait rows (to measure what the instrumentation
// costs the throughput row; every twin takes the same option). --spins=N:
// barging_lock's options::spins (default: defaults::core::barging_spins;
// 0 is the lock without the OS-thread spin).
//
// Twin: bench/peers/std/lock_contended.cpp (std::mutex, two OS threads; run
// it with --bench=NAME for each bench name).
#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include <troupe/barging_lock.hpp>
#include <troupe/blocking_lock.hpp>
#include <troupe/cluster.hpp>
#include <troupe/future.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"
#include "wait_stats.hpp"

namespace {

constexpr int workers = 2;

template <class Lock>
struct shared_state {
    template <class... Options>
    explicit shared_state(Options... o) : lock{"bench", o...} {}
    Lock lock;
    long protected_count = 0;  // guarded by lock
    // Acquisitions that took the lock from the other thread (guarded by
    // lock): printed to stderr, for the profile's "futex calls per change
    // of owner".
    int last_owner = -1;
    long owner_changes = 0;
    std::atomic<int> ready{0};
    troupe::future<void> go;  // parks the workers until the clock starts
    std::atomic<bool> stop{false};
    bool timed = true;  // --waits
    long acquisitions[workers] = {};
    bench::wait_histogram waits[workers];
};

template <class Lock>
void worker(shared_state<Lock>& s, int id) {
    s.ready.fetch_add(1);
    s.go.get();
    long mine = 0;
    bench::wait_histogram h;
    while (!s.stop.load(std::memory_order_relaxed)) {
        if (s.timed) bench::timed_lock(s.lock, h);
        else s.lock.lock();
        ++s.protected_count;
        if (s.last_owner != id) {
            s.last_owner = id;
            ++s.owner_changes;
        }
        s.lock.unlock();
        ++mine;
    }
    s.acquisitions[id] = mine;
    s.waits[id] = h;
}

template <class Lock, class... Options>
void run(const char* name, const std::string& ctx, long ms, bool timed, Options... o) {
    auto s = std::make_unique<shared_state<Lock>>(o...);
    s->timed = timed;
    bench::tick_rate rate;
    auto measure = [&](auto join_all) {
        while (s->ready.load() < workers) std::this_thread::yield();
        const auto t0 = bench::clock::now();
        s->go.fulfil();
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        s->stop.store(true, std::memory_order_relaxed);
        join_all();
        return bench::seconds(t0, bench::clock::now());
    };
    double elapsed = 0;
    if (ctx == "os") {
        std::vector<std::thread> ts;
        for (int i = 0; i < workers; ++i) ts.emplace_back([&s, i] { worker(*s, i); });
        elapsed = measure([&] {
            for (auto& t : ts) t.join();
        });
    } else if (ctx == "user") {
        troupe::cluster pool{2};
        std::vector<troupe::thread> ts;
        for (int i = 0; i < workers; ++i) ts.emplace_back(pool, [&s, i] { worker(*s, i); });
        elapsed = measure([&] {
            for (auto& t : ts) t.join();
        });
    } else {
        bench::fail("lock_contended: --ctx must be os or user");
    }
    long total = 0;
    bench::wait_histogram all;
    for (int i = 0; i < workers; ++i) {
        total += s->acquisitions[i];
        all.merge(s->waits[i]);
    }
    if (total != s->protected_count) bench::fail("lock_contended: mutual exclusion broken");
    if (total == 0) bench::fail("lock_contended: no acquisitions");
    std::fprintf(stderr, "%s troupe ctx=%s: %ld acquisitions, %ld changes of owner\n", name,
                 ctx.c_str(), total, s->owner_changes);
    std::string params = "ctx=" + ctx;
    // A non-default spin is a different configuration: its rows must not
    // pool with the default's.
    if constexpr (sizeof...(Options) > 0)
        if (((o.spins != troupe::defaults::core::barging_spins) || ...))
            params += " spins=" + std::to_string((o.spins, ...));
    if (!timed) params += " waits=off";  // likewise
    bench::result(name, "troupe", "ns_per_op", elapsed * 1e9 / static_cast<double>(total), params);
    if (timed) bench::wait_results(name, "troupe", all, rate.ns_per_tick(), params);
}

}  // namespace

int main(int argc, char** argv) {
    const long ms = bench::option(argc, argv, "ms", 1000);
    const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
    const std::string lock = bench::option_text(argc, argv, "lock", "blocking");
    const bool timed = bench::option(argc, argv, "waits", 1) != 0;
    troupe::barging_lock::options barging;
    barging.spins = static_cast<int>(bench::option(argc, argv, "spins", barging.spins));
    if (lock == "blocking") run<troupe::blocking_lock>("lock_contended", ctx, ms, timed);
    else if (lock == "barging")
        run<troupe::barging_lock>("lock_contended_barging", ctx, ms, timed, barging);
    else bench::fail("lock_contended: --lock must be blocking or barging");
}
