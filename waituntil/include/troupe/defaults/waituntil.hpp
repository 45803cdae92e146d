#pragma once
/// Every tunable default of troupe waituntil, in one place:
/// `troupe::defaults::waituntil` (troupe's tunables convention is described
/// in troupe/defaults/core.hpp).
///
/// Each is a build option of troupe (meson -Dwaituntil_range_slots=N, ...)
/// carried by the generated troupe/config.hpp as TROUPE_WAITUNTIL_*, so every
/// translation unit sees the same value; use the constants, not the macros.
#include <cstddef>

#include "troupe/config.hpp"

namespace troupe::defaults {
namespace waituntil {

/// Clauses of a run-time-length clause (`on_any` over a range) whose select
/// nodes live inside the statement, on the stack. A longer range allocates
/// its nodes once per statement (the only heap allocation waituntil makes).
inline constexpr std::size_t waituntil_range_slots = TROUPE_WAITUNTIL_RANGE_SLOTS;

/// Pause instructions a statement with `&` spins, at its very end, waiting
/// for a resource that already completed one of its clauses to finish the
/// wake-up call, before it starts yielding instead.
inline constexpr int waituntil_drain_spins = TROUPE_WAITUNTIL_DRAIN_SPINS;

}  // namespace waituntil
}  // namespace troupe::defaults
