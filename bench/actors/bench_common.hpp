#pragma once
// Shared by the troupe and CAF actor benchmark programs: argument parsing,
// timing and RESULT lines (DESIGN.md "Benchmark contract").
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace bench {

/// `--name=value` from argv, else `fallback`.
inline long arg(int argc, char** argv, const char* name, long fallback) {
    const std::size_t n = std::strlen(name);
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--", 2) == 0 && std::strncmp(argv[i] + 2, name, n) == 0 && argv[i][2 + n] == '=')
            return std::strtol(argv[i] + 3 + n, nullptr, 10);
    return fallback;
}

inline std::string sarg(int argc, char** argv, const char* name, const char* fallback) {
    const std::size_t n = std::strlen(name);
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--", 2) == 0 && std::strncmp(argv[i] + 2, name, n) == 0 && argv[i][2 + n] == '=')
            return argv[i] + 3 + n;
    return fallback;
}

class stopwatch {
public:
    stopwatch() : t0_(std::chrono::steady_clock::now()) {}
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    }

private:
    std::chrono::steady_clock::time_point t0_;
};

/// Peak resident set of this process, in KiB.
inline long max_rss_kb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/// Prints one RESULT line; `params` is e.g. "workers=2".
inline void result(const char* name, const char* system, const char* metric, double value, const std::string& params) {
    std::printf("RESULT bench=%s system=%s metric=%s value=%.6g %s\n", name, system, metric, value, params.c_str());
    std::fflush(stdout);
}

/// Parameters "workers=N" (plus extra, e.g. "steal=random").
inline std::string params(long workers, const std::string& extra = {}) {
    std::string p = "workers=" + std::to_string(workers);
    if (!extra.empty()) p += " " + extra;
    return p;
}

}  // namespace bench
