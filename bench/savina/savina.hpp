#pragma once
// troupe side of the Savina suite: the driver (registry.hpp) plus the
// executor configuration from --workers.
#include "registry.hpp"
#include "troupe/actors.hpp"

namespace savina {

/// The default configuration with --workers=N; --placement=grouped,
/// --stealing=off and --queues=N (mailboxes per worker) for diagnosis (not
/// used by bench/run: the suite measures the defaults).
inline troupe::actor_system_config config(const run_info& info) {
    troupe::actor_system_config cfg;
    cfg.workers = static_cast<std::size_t>(info.workers);
    if (bench::option_text(info.argc, info.argv, "placement", "spread") == "grouped")
        cfg.placement = troupe::external_placement::grouped;
    if (bench::option_text(info.argc, info.argv, "stealing", "on") == "off") cfg.stealing = false;
    if (const long q = bench::option(info.argc, info.argv, "queues", 0); q > 0)
        cfg.queues_per_worker = static_cast<std::size_t>(q);
    return cfg;
}

}  // namespace savina
