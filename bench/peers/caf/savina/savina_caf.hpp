#pragma once
// CAF 0.17 side of the Savina suite: the driver (bench/savina/registry.hpp)
// plus the actor system configuration from --workers.
#include <caf/all.hpp>

#include "../../../savina/registry.hpp"

namespace savina {

inline void configure(caf::actor_system_config& cfg, const run_info& info) {
    cfg.set("scheduler.max-threads", static_cast<int64_t>(info.workers));
    cfg.set("scheduler.policy", caf::atom("stealing"));
}

}  // namespace savina

namespace savina {

using stop_atom = caf::atom_constant<caf::atom("stop")>;

/// An actor that lives until it receives stop_atom. Keeping one alive
/// while main spawns short-lived actors avoids CAF 0.17's wake of the
/// thread in await_all_actors_done() each time the running count drops to
/// one (a futex round trip per actor, not part of the workload).
inline caf::behavior keeper(caf::event_based_actor* self) {
    return {[=](stop_atom) { self->quit(); }};
}

}  // namespace savina
