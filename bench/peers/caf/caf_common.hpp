#pragma once
// CAF 0.17 twins of bench/actors: configuration shared by every program.
#include <caf/all.hpp>

#include <cstdint>
#include <string>

#include "../../common/bench_util.hpp"

namespace caf_bench {

/// `--workers=N` and `--policy=stealing|sharing` from argv.
inline void configure(caf::actor_system_config& cfg, int argc, char** argv) {
    cfg.set("scheduler.max-threads", static_cast<int64_t>(bench::option(argc, argv, "workers", 1)));
    const std::string policy = bench::option_text(argc, argv, "policy", "stealing");
    if (policy == "sharing") cfg.set("scheduler.policy", caf::atom("sharing"));
    else cfg.set("scheduler.policy", caf::atom("stealing"));
}

/// The RESULT params: workers=N, plus policy=sharing when not the default.
inline std::string params(int argc, char** argv) {
    std::string p = "workers=" + std::to_string(bench::option(argc, argv, "workers", 1));
    if (bench::option_text(argc, argv, "policy", "stealing") == "sharing") p += " policy=sharing";
    return p;
}

}  // namespace caf_bench
