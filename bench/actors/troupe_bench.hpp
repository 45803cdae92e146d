#pragma once
// troupe side of the actor benchmarks: the executor configuration from argv
// (--workers=N, --steal=none|random|longest|locality).
#include <string>

#include "bench_util.hpp"
#include "troupe/actors.hpp"

namespace bench {

inline troupe::executor_config config(int argc, char** argv) {
    troupe::executor_config cfg;
    cfg.workers = static_cast<std::size_t>(option(argc, argv, "workers", 1));
    const std::string steal = option_text(argc, argv, "steal", "longest");
    cfg.stealing = steal != "none";
    if (steal == "random") cfg.victims = troupe::victim_policy::random;
    if (steal == "locality") cfg.victims = troupe::victim_policy::locality;
    return cfg;
}

}  // namespace bench
