// bench=lock_contended, system=troupe: two threads hammer one
// troupe::blocking_lock with a tiny critical section for a fixed duration.
// Reports ns_per_op = elapsed time / total acquisitions (both threads).
// --ctx=os: two OS threads (std::thread); --ctx=user: two user threads on a
// 2-processor cluster. --ms: duration in milliseconds.
//
// Twin: bench/peers/std/lock_contended.cpp (std::mutex, two OS threads).
#include <atomic>
#include <thread>
#include <vector>

#include <troupe/blocking_lock.hpp>
#include <troupe/cluster.hpp>
#include <troupe/future.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

namespace {

constexpr int workers = 2;

struct shared_state {
    troupe::blocking_lock lock{"bench"};
    long protected_count = 0;  // guarded by lock
    std::atomic<int> ready{0};
    troupe::future<void> go;  // parks the workers until the clock starts
    std::atomic<bool> stop{false};
    long acquisitions[workers] = {};
};

void worker(shared_state& s, int id) {
    s.ready.fetch_add(1);
    s.go.get();
    long mine = 0;
    while (!s.stop.load(std::memory_order_relaxed)) {
        s.lock.lock();
        ++s.protected_count;
        s.lock.unlock();
        ++mine;
    }
    s.acquisitions[id] = mine;
}

}  // namespace

int main(int argc, char** argv) {
    const long ms = bench::option(argc, argv, "ms", 1000);
    const std::string ctx = bench::option_text(argc, argv, "ctx", "os");
    shared_state s;
    auto measure = [&](auto join_all) {
        while (s.ready.load() < workers) std::this_thread::yield();
        const auto t0 = bench::clock::now();
        s.go.fulfil();
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        s.stop.store(true, std::memory_order_relaxed);
        join_all();
        return bench::seconds(t0, bench::clock::now());
    };
    double elapsed = 0;
    if (ctx == "os") {
        std::vector<std::thread> ts;
        for (int i = 0; i < workers; ++i) ts.emplace_back([&s, i] { worker(s, i); });
        elapsed = measure([&] {
            for (auto& t : ts) t.join();
        });
    } else if (ctx == "user") {
        troupe::cluster pool{2};
        std::vector<troupe::thread> ts;
        for (int i = 0; i < workers; ++i) ts.emplace_back(pool, [&s, i] { worker(s, i); });
        elapsed = measure([&] {
            for (auto& t : ts) t.join();
        });
    } else {
        bench::fail("lock_contended: --ctx must be os or user");
    }
    long total = 0;
    for (long a : s.acquisitions) total += a;
    if (total != s.protected_count) bench::fail("lock_contended: mutual exclusion broken");
    if (total == 0) bench::fail("lock_contended: no acquisitions");
    bench::result("lock_contended", "troupe", "ns_per_op",
                  elapsed * 1e9 / static_cast<double>(total), "ctx=" + ctx);
}
