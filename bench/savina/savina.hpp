#pragma once
// troupe side of the Savina suite: the driver (registry.hpp) plus the
// executor configuration from --workers.
#include "registry.hpp"
#include "troupe/actors.hpp"

namespace savina {

/// The default configuration with --workers=N; --placement=grouped and
/// --stealing=off (not used by bench/run: the suite measures the defaults)
/// for diagnosis.
inline troupe::actor_system_config config(const run_info& info) {
    troupe::actor_system_config cfg;
    cfg.workers = static_cast<std::size_t>(info.workers);
    if (bench::option_text(info.argc, info.argv, "placement", "spread") == "grouped")
        cfg.placement = troupe::external_placement::grouped;
    if (bench::option_text(info.argc, info.argv, "stealing", "on") == "off") cfg.stealing = false;
    return cfg;
}

}  // namespace savina
