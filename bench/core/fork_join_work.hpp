#pragma once
// The workloads of the fork-join benchmarks, shared by troupe's programs
// (fork_join_fib.cpp, parallel_for.cpp) and their C++ twins
// (bench/peers/tbb/, bench/peers/openmp/); the Go twins
// (bench/peers/go/fork_join_fib.go, parallel_for.go) spell the same code.
// No troupe dependency.
#include <cstdint>

namespace bench::fj {

/// fib(n) computed serially: the check for the parallel results.
inline long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

/// The compute-bound loop body: 64 rounds of a 64-bit LCG step and an
/// xor-shift on the index (about 200 cycles, no memory traffic). The loop
/// benchmarks sum it over [0, n).
inline std::uint64_t kernel(std::uint64_t i) {
    std::uint64_t x = i;
    for (int r = 0; r < 64; ++r) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        x ^= x >> 29;
    }
    return x;
}

/// The sum of kernel(i) over [b, e).
inline std::uint64_t kernel_sum(std::uint64_t b, std::uint64_t e) {
    std::uint64_t s = 0;
    for (std::uint64_t i = b; i < e; ++i) s += kernel(i);
    return s;
}

}  // namespace bench::fj
