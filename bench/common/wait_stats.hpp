#pragma once
// Wait-time percentiles for the contended-lock benchmarks (troupe and its
// std and Boost.Fiber twins use the same code, so all pay the same
// instrumentation). Every acquisition is counted, through timed_lock(): one
// that succeeds at its first try_lock() counts as a zero wait and reads no
// clock (its wait is that one CAS); otherwise the cycle counter is read
// before lock() and after it returns. (Reading it around every acquisition
// costs more than the acquisitions it measures: with two reads each, two
// OS threads on a 2026 EPYC under KVM measured 59 ns per acquisition with
// barging_lock and 103 with std::mutex, against 16 and 42 without.) Each
// thread adds to a log-linear histogram of its own; the histograms are
// merged at the end, converted to nanoseconds with a rate calibrated
// against steady_clock over the whole run. Percentiles are bucket upper
// bounds (16 buckets per power of two: within 6.25%); the maximum is exact.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "bench_util.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace bench {

/// A cheap monotonic tick (the TSC on x86, steady_clock elsewhere).
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(clock::now().time_since_epoch().count());
#endif
}

/// One thread's wait histogram (no sharing: merge at the end).
class wait_histogram {
public:
    static constexpr int sub_bits = 4;  // 16 buckets per power of two
    static constexpr int buckets = 64 << sub_bits;

    void add(std::uint64_t t) noexcept {
        ++counts_[index(t)];
        max_ = std::max(max_, t);
        ++n_;
    }
    /// A zero wait (cheaper than add(0)).
    void add_zero() noexcept {
        ++counts_[0];
        ++n_;
    }
    void merge(const wait_histogram& o) noexcept {
        for (int i = 0; i < buckets; ++i) counts_[i] += o.counts_[i];
        max_ = std::max(max_, o.max_);
        n_ += o.n_;
    }
    std::uint64_t count() const noexcept { return n_; }
    std::uint64_t max() const noexcept { return max_; }
    /// The upper bound (in ticks) of the bucket holding quantile q.
    std::uint64_t quantile(double q) const noexcept {
        const auto want = static_cast<std::uint64_t>(q * static_cast<double>(n_));
        std::uint64_t seen = 0;
        for (int i = 0; i < buckets; ++i) {
            seen += counts_[i];
            if (seen > want) return std::min(upper(i), max_);
        }
        return max_;
    }

private:
    static int index(std::uint64_t t) noexcept {
        if (t < (1u << sub_bits)) return static_cast<int>(t);
        const int msb = 63 - __builtin_clzll(t);
        const int shift = msb - sub_bits;
        return ((shift + 1) << sub_bits) + static_cast<int>((t >> shift) & ((1u << sub_bits) - 1));
    }
    static std::uint64_t upper(int i) noexcept {
        if (i < (1 << sub_bits)) return static_cast<std::uint64_t>(i);
        const int shift = (i >> sub_bits) - 1;
        const std::uint64_t mant =
            (1u << sub_bits) | (static_cast<unsigned>(i) & ((1u << sub_bits) - 1));
        return ((mant + 1) << shift) - 1;
    }
    std::array<std::uint64_t, buckets> counts_{};
    std::uint64_t max_ = 0;
    std::uint64_t n_ = 0;
};

/// Acquires `l` (try_lock, then lock) and records its wait in `h`: zero if
/// the first try_lock succeeds (no clock read), else the ticks lock() took.
template <class Lock>
inline void timed_lock(Lock& l, wait_histogram& h) {
    if (l.try_lock()) [[likely]] {
        h.add_zero();
        return;
    }
    const std::uint64_t t0 = ticks();
    l.lock();
    h.add(ticks() - t0);
}

/// Converts ticks to nanoseconds: construct before the run, call
/// ns_per_tick() after it.
class tick_rate {
public:
    tick_rate() : t0_(clock::now()), k0_(ticks()) {}
    double ns_per_tick() const {
        const double ns = seconds(t0_, clock::now()) * 1e9;
        const auto k = static_cast<double>(ticks() - k0_);
        return k > 0 ? ns / k : 1.0;
    }

private:
    clock::time_point t0_;
    std::uint64_t k0_;
};

/// Prints wait_p50_ns, wait_p99_ns and wait_max_ns RESULT lines.
inline void wait_results(const char* bench, const char* system, const wait_histogram& h,
                         double ns_per_tick, const std::string& params) {
    auto ns = [&](std::uint64_t t) { return static_cast<double>(t) * ns_per_tick; };
    result(bench, system, "wait_p50_ns", ns(h.quantile(0.50)), params);
    result(bench, system, "wait_p99_ns", ns(h.quantile(0.99)), params);
    result(bench, system, "wait_max_ns", ns(h.max()), params);
}

}  // namespace bench
