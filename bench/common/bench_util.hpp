#pragma once
// The one header shared by every benchmark program and its C++ peer twins
// (bench/<module>/, bench/peers/): option parsing, a clock and stopwatch,
// peak RSS, the timed loop of single-thread benchmarks and the measured
// window of throughput benchmarks, and the one output
// format the harness reads,
//
//     RESULT bench=<name> system=<system> metric=<metric> value=<number> <param>=<value>...
//
// (bench/README.md, "RESULT lines"). Header-only, no troupe dependency, so the
// twins link nothing but their own system.
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bench {

using clock = std::chrono::steady_clock;

/// A second OS thread that only sleeps (on a condition variable) while it
/// lives. glibc gives a single-threaded process a std::mutex without atomic
/// instructions (its __libc_single_threaded shortcut), which no program
/// that uses threads ever sees: an uncontended-lock benchmark keeps one of
/// these alive on both sides, so both measure the multi-threaded path.
class idle_thread {
public:
    idle_thread()
        : t_([this] {
              std::unique_lock g{m_};
              cv_.wait(g, [this] { return stop_; });
          }) {}
    ~idle_thread() {
        {
            std::lock_guard g{m_};
            stop_ = true;
        }
        cv_.notify_one();
        t_.join();
    }
    idle_thread(const idle_thread&) = delete;
    idle_thread& operator=(const idle_thread&) = delete;

private:
    std::mutex m_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread t_;
};

/// Seconds between two time points.
inline double seconds(clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

/// Calls `op()` iters / 10 + 1 times to warm up, then `iters` times on the
/// clock; returns the nanoseconds per timed call. The loop of the
/// single-thread (uncontended) benchmarks and of their twins.
template <class Op>
double ns_per_op(long iters, Op op) {
    for (long i = 0; i < iters / 10 + 1; ++i) op();
    const auto t0 = clock::now();
    for (long i = 0; i < iters; ++i) op();
    const auto t1 = clock::now();
    return seconds(t0, t1) * 1e9 / static_cast<double>(iters);
}

/// The measured window of a throughput benchmark: opens `start` (release:
/// the workers waiting on it see all that was set up before), sleeps `ms`
/// milliseconds, raises `stop` (relaxed: the workers only poll it); returns
/// the seconds from the opening to the stop.
inline double timed_window(std::atomic<bool>& start, std::atomic<bool>& stop, long ms) {
    const auto t0 = clock::now();
    start.store(true, std::memory_order_release);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    stop.store(true, std::memory_order_relaxed);
    return seconds(t0, clock::now());
}

/// The value of option `--name=value` (integer), or `fallback` if absent.
inline long option(int argc, char** argv, const char* name, long fallback) {
    const std::size_t len = std::strlen(name);
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (a[0] == '-' && a[1] == '-' && std::strncmp(a + 2, name, len) == 0 && a[2 + len] == '=')
            return std::strtol(a + 3 + len, nullptr, 10);
    }
    return fallback;
}

/// The value of option `--name=value` (text), or `fallback` if absent.
inline std::string option_text(int argc, char** argv, const char* name, const char* fallback) {
    const std::size_t len = std::strlen(name);
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (a[0] == '-' && a[1] == '-' && std::strncmp(a + 2, name, len) == 0 && a[2 + len] == '=')
            return a + 3 + len;
    }
    return fallback;
}

/// The binding label of a RESULT line: --binding=NAME when given (the
/// launch line says how mpirun bound the ranks), else what this process's
/// CPU mask shows, so a plain `mpirun -np 2` (one core per rank) is never
/// labelled unbound: "core" (one CPU), "none" (every online CPU) or
/// "cpusN" (N of them).
inline std::string binding_label(int argc, char** argv) {
    const std::string given = option_text(argc, argv, "binding", "");
    if (!given.empty()) return given;
    cpu_set_t set;
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return "unknown";
    const int allowed = CPU_COUNT(&set);
    const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (allowed == 1) return "core";
    if (allowed >= online) return "none";
    return "cpus" + std::to_string(allowed);
}

/// Measures seconds since its construction.
class stopwatch {
public:
    stopwatch() : t0_(clock::now()) {}
    double seconds() const { return bench::seconds(t0_, clock::now()); }

private:
    clock::time_point t0_;
};

/// Peak resident set of this program, in KiB: VmHWM of /proc/self/status.
/// Not getrusage's ru_maxrss: Linux carries that across execve from the
/// process image before it, so under a launcher (bench/timed, a Python
/// interpreter of about 13.6 MiB) every program read at least the
/// launcher's size. ru_maxrss only where /proc is missing.
inline long max_rss_kb() {
    if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
        char line[256];
        long kb = -1;
        while (std::fgets(line, sizeof line, f))
            if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
        std::fclose(f);
        if (kb >= 0) return kb;
    }
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/// Parameters "workers=N" (plus extra, e.g. "steal=random"), for RESULT lines.
inline std::string params(long workers, const std::string& extra = {}) {
    std::string p = "workers=" + std::to_string(workers);
    if (!extra.empty()) p += " " + extra;
    return p;
}

/// Prints one RESULT line; `params` is "" or "k=v k=v".
inline void result(const char* name, const char* system, const char* metric, double value,
                   const std::string& params = "") {
    std::printf("RESULT bench=%s system=%s metric=%s value=%.6g%s%s\n", name, system, metric, value,
                params.empty() ? "" : " ", params.c_str());
    std::fflush(stdout);
}

/// Prints the latency lines of one request/reply benchmark from its
/// per-operation samples (nanoseconds): bench=<name> (the mean), <name>_p50
/// and <name>_p99 (nearest-rank percentiles), all metric=ns_per_op.
inline void latency_results(const char* name, const char* system, std::vector<double> ns,
                            const std::string& params = "") {
    if (ns.empty()) return;
    std::sort(ns.begin(), ns.end());
    double sum = 0;
    for (double v : ns) sum += v;
    const auto at = [&](double q) {
        const std::size_t i =
            static_cast<std::size_t>(q * static_cast<double>(ns.size() - 1) + 0.5);
        return ns[std::min(i, ns.size() - 1)];
    };
    const std::string n = name;
    result(name, system, "ns_per_op", sum / static_cast<double>(ns.size()), params);
    result((n + "_p50").c_str(), system, "ns_per_op", at(0.50), params);
    result((n + "_p99").c_str(), system, "ns_per_op", at(0.99), params);
}

/// Stops the program with a message on stderr (never on stdout, which the
/// harness parses) when a run produced a wrong outcome.
[[noreturn]] inline void fail(const char* what) {
    std::fprintf(stderr, "benchmark failed: %s\n", what);
    std::exit(1);
}

}  // namespace bench
