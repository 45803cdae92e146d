#pragma once
// Shared by the channel benchmark programs and their C++ peer twins
// (bench/peers/boost_fiber/chan_*.cpp): option parsing, a clock, and the
// RESULT line format the harness reads (DESIGN.md "Benchmark contract").
// Header-only, no troupe dependency.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace chan_bench {

using clock = std::chrono::steady_clock;

inline double seconds(clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
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

/// Prints one RESULT line; `params` is "" or "k=v k=v".
inline void result(const char* name, const char* system, const char* metric, double value,
                   const std::string& params = "") {
    std::printf("RESULT bench=%s system=%s metric=%s value=%.4f%s%s\n", name, system, metric, value,
                params.empty() ? "" : " ", params.c_str());
    std::fflush(stdout);
}

/// Stops the program with a message on stderr when a run went wrong.
[[noreturn]] inline void fail(const char* what) {
    std::fprintf(stderr, "benchmark failed: %s\n", what);
    std::exit(1);
}

}  // namespace chan_bench
