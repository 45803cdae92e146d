// bench=lock_contended (--lock=blocking: troupe::blocking_lock, FIFO
// hand-off) and bench=lock_contended_barging (--lock=barging:
// troupe::barging_lock, Go's two modes), system=troupe: two threads hammer
// one lock with a tiny critical section for a fixed duration. Reports
// ns_per_op = elapsed time / total acquisitions (both threads), and the
// wait of every acquisition (from calling lock() to its return) as
// wait_p50_ns, wait_p99_ns, wait_max_ns (bench/common/wait_stats.hpp; the
// twin pays the same two cycle-counter reads per acquisition).
// --ctx=os: two OS threads (std::thread); --ctx=user: two user threads on a
// 2-processor cluster. --ms: duration in milliseconds.
//
// Twin: bench/peers/std/lock_contended.cpp (std::mutex, two OS threads; run
// it with --bench=NAME for each bench name).
#include <atomic>
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
    Lock lock{"bench"};
    long protected_count = 0;  // guarded by lock
    std::atomic<int> ready{0};
    troupe::future<void> go;  // parks the workers until the clock starts
    std::atomic<bool> stop{false};
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
        const std::uint64_t t0 = bench::ticks();
        s.lock.lock();
        h.add(bench::ticks() - t0);
        ++s.protected_count;
        s.lock.unlock();
        ++mine;
    }
    s.acquisitions[id] = mine;
    s.waits[id] = h;
}

template <class Lock>
void run(const char* name, const std::string& ctx, long ms) {
    auto s = std::make_unique<shared_state<Lock>>();
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
    const std::string params = "ctx=" + ctx;
    bench::result(name, "troupe", "ns_per_op", elapsed * 1e9 / static_cast<double>(total), params);
    bench::wait_results(name, "troupe", all, rate.ns_per_tick(), params);
}

}  // namespace

int main(int argc, char** argv) {
    const long ms = bench::option(argc, argv, "ms", 1000);
    const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
    const std::string lock = bench::option_text(argc, argv, "lock", "blocking");
    if (lock == "blocking") run<troupe::blocking_lock>("lock_contended", ctx, ms);
    else if (lock == "barging") run<troupe::barging_lock>("lock_contended_barging", ctx, ms);
    else bench::fail("lock_contended: --lock must be blocking or barging");
}
