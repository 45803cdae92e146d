#pragma once
// Shared by the troupe and CAF actor benchmark programs: the common helpers
// of bench/core/bench_util.hpp (options, RESULT lines) under the names the
// actor programs use, plus a stopwatch, peak RSS and the workers= params.
#include <sys/resource.h>

#include <chrono>
#include <string>

#include "../core/bench_util.hpp"

namespace bench {

/// `--name=value` from argv, else `fallback`.
inline long arg(int argc, char** argv, const char* name, long fallback) {
    return option(argc, argv, name, fallback);
}
inline std::string sarg(int argc, char** argv, const char* name, const char* fallback) {
    return option_text(argc, argv, name, fallback);
}

class stopwatch {
public:
    stopwatch() : t0_(clock::now()) {}
    double seconds() const { return bench::seconds(t0_, clock::now()); }

private:
    clock::time_point t0_;
};

/// Peak resident set of this process, in KiB.
inline long max_rss_kb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/// Parameters "workers=N" (plus extra, e.g. "steal=random").
inline std::string params(long workers, const std::string& extra = {}) {
    std::string p = "workers=" + std::to_string(workers);
    if (!extra.empty()) p += " " + extra;
    return p;
}

}  // namespace bench
