#pragma once
// Shared by the waituntil benchmark programs: option parsing, a clock, and
// the RESULT line format the harness reads (DESIGN.md "Benchmark
// contract"). The Go twins (bench/peers/go/select_*.go) print the same
// lines with system=go.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace select_bench {

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

/// The value of option `--name=value` (text), or `fallback` if absent.
inline std::string text_option(int argc, char** argv, const char* name, const char* fallback) {
    const std::size_t len = std::strlen(name);
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (a[0] == '-' && a[1] == '-' && std::strncmp(a + 2, name, len) == 0 && a[2 + len] == '=')
            return a + 3 + len;
    }
    return fallback;
}

/// Prints one RESULT line; `params` is "" or "k=v k=v".
inline void result(const char* name, const char* metric, double value, const std::string& params) {
    std::printf("RESULT bench=%s system=troupe metric=%s value=%.4f%s%s\n", name, metric, value,
                params.empty() ? "" : " ", params.c_str());
    std::fflush(stdout);
}

/// Stops the program with a message on stderr when a run went wrong.
[[noreturn]] inline void fail(const char* what) {
    std::fprintf(stderr, "benchmark failed: %s\n", what);
    std::exit(1);
}

}  // namespace select_bench
