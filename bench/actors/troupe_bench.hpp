#pragma once
// troupe side of the actor benchmarks: the executor configuration from argv
// (--workers=N, --steal=none|random|longest|locality,
// --placement=grouped|spread, --run=N: placement of actors main creates;
// --queues=N: mailboxes per worker).
#include <string>

#include "bench_util.hpp"
#include "troupe/actors.hpp"

namespace bench {

inline troupe::actor_system_config config(int argc, char** argv) {
    troupe::actor_system_config cfg;
    cfg.workers = static_cast<std::size_t>(option(argc, argv, "workers", 1));
    const std::string steal = option_text(argc, argv, "steal", "longest");
    cfg.stealing = steal != "none";
    if (steal == "random") cfg.victims = troupe::victim_policy::random;
    if (steal == "locality") cfg.victims = troupe::victim_policy::locality;
    if (option_text(argc, argv, "placement", "spread") == "grouped")
        cfg.placement = troupe::external_placement::grouped;
    cfg.queues_per_worker = static_cast<std::size_t>(option(
        argc, argv, "queues", static_cast<long>(troupe::defaults::actors::queues_per_worker)));
    cfg.placement_run = static_cast<std::size_t>(
        option(argc, argv, "run", troupe::defaults::actors::placement_run));
    return cfg;
}

}  // namespace bench
