#pragma once
// The Savina suite's shared driver, used by troupe's programs
// (bench/savina/) and by their CAF 0.17 twins (bench/peers/caf/savina/):
// each benchmark registers one function under its Savina name; one program
// per side runs the one named by --bench=NAME and prints
//
//     RESULT bench=savina_NAME system=SYS metric=seconds value=S workers=W
//     RESULT bench=savina_NAME system=SYS metric=max_rss_kb value=KB workers=W
//     RESULT bench=savina_NAME system=SYS metric=check value=C workers=W
//
// `check` is the benchmark's result (a count, a sum, a checksum), computed
// the same way on both sides: bench/savina/run.sh and check.sh compare it
// between troupe and CAF. One program per side (not one per benchmark)
// keeps the CAF twins to a single translation unit: CAF 0.17's headers
// cost most of a twin's compile time. No troupe or CAF dependency here.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "../common/bench_util.hpp"

namespace savina {

/// What a benchmark is asked to do: the worker count and the size.
struct run_info {
    long workers = 1;
    bool quick = false;
    int argc = 0;
    char** argv = nullptr;
    /// `--name=N` if given, else `full` (or `quick` with --quick).
    long size(const char* name, long full, long quick_size) const {
        return bench::option(argc, argv, name, quick ? quick_size : full);
    }
};

/// What a run produced: the timed seconds and the checked result.
struct outcome {
    double seconds = 0;
    std::uint64_t check = 0;
};

using bench_fn = outcome (*)(const run_info&);

inline std::map<std::string, bench_fn>& registry() {
    static std::map<std::string, bench_fn> r;
    return r;
}

/// Registers a benchmark at static-initialisation time.
struct registrar {
    registrar(const char* name, bench_fn f) { registry()[name] = f; }
};

/// Mixes `v` into a running checksum (order-dependent: for results whose
/// order both sides fix, such as a sorted array).
inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    return (h ^ v) * 0x100000001b3ULL + (h >> 29);
}

/// A small deterministic generator (both sides draw the same numbers).
struct lcg {
    std::uint64_t s;
    explicit lcg(std::uint64_t seed) : s(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
    std::uint64_t next() {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return s >> 17;
    }
    long below(long n) { return static_cast<long>(next() % static_cast<std::uint64_t>(n)); }
};

/// The program's main: --bench=NAME (or --list), --workers=N, --quick.
inline int run_main(const char* system, int argc, char** argv) {
    const std::string name = bench::option_text(argc, argv, "bench", "");
    if (name == "list" || bench::option(argc, argv, "list", 0)) {
        for (const auto& [n, f] : registry()) std::printf("%s\n", n.c_str());
        return 0;
    }
    const auto it = registry().find(name);
    if (it == registry().end()) {
        std::fprintf(stderr, "%s: unknown --bench=%s (--list names them)\n", argv[0], name.c_str());
        return 2;
    }
    run_info info;
    info.workers = bench::option(argc, argv, "workers", 1);
    info.quick = bench::option(argc, argv, "quick", 0) != 0;
    info.argc = argc;
    info.argv = argv;
    const outcome o = it->second(info);
    const std::string b = "savina_" + name;
    const std::string p = "workers=" + std::to_string(info.workers);
    bench::result(b.c_str(), system, "seconds", o.seconds, p);
    bench::result(b.c_str(), system, "max_rss_kb", static_cast<double>(bench::max_rss_kb()), p);
    std::printf("RESULT bench=%s system=%s metric=check value=%llu %s\n", b.c_str(), system,
                static_cast<unsigned long long>(o.check), p.c_str());
    return 0;
}

}  // namespace savina

/// Defines benchmark NAME's function (run_info -> outcome) and registers it.
/// Use inside a namespace of the benchmark's own (the CAF twins share one
/// translation unit).
#define SAVINA_BENCH(NAME)                                        \
    savina::outcome NAME##_run(const savina::run_info& info);     \
    const savina::registrar NAME##_registrar{#NAME, &NAME##_run}; \
    savina::outcome NAME##_run([[maybe_unused]] const savina::run_info& info)
