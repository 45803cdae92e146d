#pragma once
// The multi-lock benchmark of Parsons' thesis (ch. "Mutex Statement",
// "Performance"), shared by its three variants so that they differ only in
// how one set of locks is acquired:
//
//   system=troupe    bench/mutexstmt/mutex_stmt.cpp           TROUPE_MUTEX
//   system=std       bench/peers/std/mutex_stmt.cpp           std::scoped_lock
//   system=baseline  bench/peers/std/mutex_stmt_baseline.cpp  one fixed order
//
// T OS threads (std::thread, on every side) each repeatedly acquire the same
// N spin locks, named in a random order taken in turn from 100 orders
// precomputed per thread (same seeds on every side), with an empty critical
// section, for a fixed duration; the result is acquisitions of the whole set
// per second, all threads together. The main thread is the timer: it sets
// the stop flag, and takes the count at that moment from per-thread counters,
// so a variant that stalls (std::scoped_lock can livelock) still reports
// what it got, and the program exits after a grace period instead of
// hanging. Options: --locks=N (1..8) --threads=T --ms=duration.
//
//   RESULT bench=mutex_stmt system=<system> metric=ops_per_s value=<v> locks=N threads=T
#include <pthread.h>
#include <sched.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_util.hpp"

namespace mutex_stmt_bench {

/// The one test-and-set spin lock every variant uses: each attempt is an
/// atomic exchange, with a pause between attempts and a yield of the kernel
/// thread every 256 of them, so oversubscribed runs (T > cores) still
/// progress. `Align` 1: the locks of a set share a cache line, like the
/// thesis's array of spin locks (--layout=packed, the default); 64: one line
/// each (--layout=padded).
template <std::size_t Align>
class alignas(Align) basic_spinlock {
public:
    void lock() noexcept {
        if (held_.exchange(true, std::memory_order_acquire)) [[unlikely]]
            lock_slow();
    }
    bool try_lock() noexcept { return !held_.exchange(true, std::memory_order_acquire); }
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

private:
    // Out of line, so the inlined fast path costs its callers no registers.
    [[gnu::noinline]] void lock_slow() noexcept {
        for (int attempts = 1; held_.exchange(true, std::memory_order_acquire); ++attempts) {
            if (attempts % yield_every != 0) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else {
                std::this_thread::yield();
            }
        }
    }

    static constexpr int yield_every = 256;
    std::atomic<bool> held_{false};
};
using packed_spinlock = basic_spinlock<1>;
using padded_spinlock = basic_spinlock<64>;

inline constexpr int orders_per_thread = 100;
inline constexpr int max_locks = 8;

/// Thread t's orders: orders_per_thread permutations of 0..n-1, back to back.
inline std::vector<std::uint32_t> make_orders(int t, int n) {
    std::mt19937 rng{20230u + unsigned(t)};
    std::vector<std::uint32_t> all;
    std::vector<std::uint32_t> one(std::size_t(n), 0);
    for (int k = 0; k < n; ++k) one[std::size_t(k)] = std::uint32_t(k);
    for (int o = 0; o < orders_per_thread; ++o) {
        for (int k = n - 1; k > 0; --k)
            std::swap(one[std::size_t(k)], one[rng() % unsigned(k + 1)]);
        all.insert(all.end(), one.begin(), one.end());
    }
    return all;
}

/// Binds the calling thread to CPU t mod (CPUs available to the process),
/// so that T = 2 always means two threads on two cores contending, rather
/// than whatever placement the kernel picks under other load (two threads
/// sharing one core take turns and never contend). Same on every side.
inline void pin_to_cpu(int t) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    if (cpus.empty()) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[std::size_t(t) % cpus.size()], &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

struct alignas(64) counter {
    std::atomic<std::uint64_t> acquisitions{0};
    std::atomic<bool> finished{false};
};

/// Runs the benchmark with locks of type Lock. `acquire(std::integral_constant<
/// size_t, N>, locks, order)` must lock locks[order[0..N-1]], run the (empty)
/// critical section and unlock them.
template <class Lock, class Acquire>
int run_with(int n, int threads, long ms, bool pin, bool verbose, const std::string& params,
             const char* system, Acquire acquire) {
    std::vector<Lock> locks(static_cast<std::size_t>(n));
    std::vector<counter> counts(static_cast<std::size_t>(threads));
    std::atomic<int> ready{0};
    std::atomic<bool> go{false}, stop{false};

    auto worker = [&]<std::size_t N>(std::integral_constant<std::size_t, N> locks_n, int t) {
        if (pin) pin_to_cpu(t);
        const std::vector<std::uint32_t> orders = make_orders(t, int(N));
        counter& mine = counts[std::size_t(t)];
        Lock* const l = locks.data();
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        std::uint64_t count = 0;
        std::size_t next = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            acquire(locks_n, l, orders.data() + next);
            next = next + N == orders.size() ? 0 : next + N;
            // Only this thread writes its counter; the timer reads it.
            mine.acquisitions.store(++count, std::memory_order_relaxed);
        }
        mine.finished.store(true, std::memory_order_release);
    };
    auto start = [&]<std::size_t N>(std::integral_constant<std::size_t, N> locks_n) {
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t) ts.emplace_back(worker, locks_n, t);
        return ts;
    };
    std::vector<std::thread> ts = with_count(n, start);

    while (ready.load() < threads) std::this_thread::yield();
    const double elapsed = bench::timed_window(go, stop, ms);
    std::uint64_t total = 0;
    for (auto& c : counts) total += c.acquisitions.load(std::memory_order_relaxed);

    // Give stragglers a grace period to see the flag; a thread still inside
    // an acquisition after it is stuck (livelock): report and leave anyway.
    const long grace_ms = std::max(ms, 1000L);
    const auto grace_end = bench::clock::now() + std::chrono::milliseconds(grace_ms);
    bool all_finished = false;
    while (!all_finished && bench::clock::now() < grace_end) {
        all_finished = true;
        for (auto& c : counts)
            all_finished = all_finished && c.finished.load(std::memory_order_acquire);
        if (!all_finished) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (total == 0)
        std::fprintf(stderr, "mutex_stmt %s %s: no acquisition completed\n", system,
                     params.c_str());
    bench::result("mutex_stmt", system, "ops_per_s", double(total) / elapsed, params);
    // How the acquisitions were shared: always shown when some thread got
    // under a tenth of a fair share (starved: the total then measures one
    // thread running alone), on request otherwise.
    std::uint64_t least = total;
    for (auto& c : counts)
        least = std::min<std::uint64_t>(least, c.acquisitions.load(std::memory_order_relaxed));
    if (verbose || (threads > 1 && least * 10 * std::uint64_t(threads) < total)) {
        std::fprintf(stderr, "mutex_stmt %s %s: %sper thread", system, params.c_str(),
                     least * 10 * std::uint64_t(threads) < total ? "starved, " : "");
        for (auto& c : counts)
            std::fprintf(stderr, " %llu",
                         (unsigned long long)c.acquisitions.load(std::memory_order_relaxed));
        std::fprintf(stderr, "\n");
    }
    if (!all_finished) {
        std::fprintf(stderr,
                     "mutex_stmt %s %s: threads still acquiring %ld ms after stop "
                     "(stalled); reported the count at stop\n",
                     system, params.c_str(), grace_ms);
        std::_Exit(0);  // cannot join a stalled thread
    }
    for (auto& t : ts) t.join();
    return 0;
}

/// Calls `f(integral_constant<size_t, N>)` for the run-time count n (1..8).
template <class F>
decltype(auto) with_count(int n, F&& f) {
    switch (n) {
    case 1: return f(std::integral_constant<std::size_t, 1>{});
    case 2: return f(std::integral_constant<std::size_t, 2>{});
    case 3: return f(std::integral_constant<std::size_t, 3>{});
    case 4: return f(std::integral_constant<std::size_t, 4>{});
    case 5: return f(std::integral_constant<std::size_t, 5>{});
    case 6: return f(std::integral_constant<std::size_t, 6>{});
    case 7: return f(std::integral_constant<std::size_t, 7>{});
    default: return f(std::integral_constant<std::size_t, 8>{});
    }
}

/// CPU time of the calling thread, in seconds.
inline double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

/// bench=mutex_stmt_cost: what one acquisition of the set costs a single
/// thread (no contention), in ns of the thread's own CPU time, the minimum
/// over `trials` batches. CPU time and the minimum make it insensitive to
/// other load on the machine, so the three variants' differences (sorting,
/// duplicate checks, try_lock) show even when the machine is busy.
template <class Lock, class Acquire>
int run_cost(int n, int trials, const std::string& params, const char* system, Acquire acquire) {
    std::vector<Lock> locks(static_cast<std::size_t>(n));
    const std::vector<std::uint32_t> orders = make_orders(0, n);
    constexpr int batch = 200'000;
    double best = 1e30;
    with_count(n, [&]<std::size_t N>(std::integral_constant<std::size_t, N> locks_n) {
        for (int trial = 0; trial < trials; ++trial) {
            std::size_t next = 0;
            const double t0 = thread_cpu_seconds();
            for (int i = 0; i < batch; ++i) {
                acquire(locks_n, locks.data(), orders.data() + next);
                next = next + N == orders.size() ? 0 : next + N;
            }
            best = std::min(best, (thread_cpu_seconds() - t0) * 1e9 / batch);
        }
    });
    bench::result("mutex_stmt_cost", system, "ns_per_op", best, params);
    return 0;
}

/// Parses --locks, --threads, --ms and --layout and runs the benchmark.
/// `acquire` is generic over the lock type (see run_with).
template <class Acquire>
int run(int argc, char** argv, const char* system, Acquire acquire) {
    const int n = int(bench::option(argc, argv, "locks", 2));
    const int threads = int(bench::option(argc, argv, "threads", 2));
    const long ms = bench::option(argc, argv, "ms", 1000);
    const std::string layout = bench::option_text(argc, argv, "layout", "packed");
    const bool verbose = bench::option(argc, argv, "verbose", 0) != 0;
    const bool pin = bench::option(argc, argv, "pin", 1) != 0;
    const long cost_trials = bench::option(argc, argv, "cost", 0);
    if (n < 1 || n > max_locks || threads < 1)
        bench::fail("mutex_stmt: --locks=1..8, --threads>=1");
    if (cost_trials > 0) {
        if (layout != "packed") bench::fail("mutex_stmt: --cost uses the packed layout");
        return run_cost<packed_spinlock>(n, int(cost_trials), "locks=" + std::to_string(n), system,
                                         acquire);
    }
    std::string params = "locks=" + std::to_string(n) + " threads=" + std::to_string(threads);
    if (layout == "packed")
        return run_with<packed_spinlock>(n, threads, ms, pin, verbose, params, system, acquire);
    if (layout != "padded") bench::fail("mutex_stmt: --layout=packed|padded");
    return run_with<padded_spinlock>(n, threads, ms, pin, verbose, params + " layout=padded",
                                     system, acquire);
}

}  // namespace mutex_stmt_bench
