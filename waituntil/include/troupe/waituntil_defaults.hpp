#pragma once
/// Every tunable default of troupe waituntil, in one place. Each is a build
/// option of troupe (meson -Dwaituntil_range_slots=N, ...) carried by
/// troupe/config.hpp, so every translation unit sees the same value.
#include "troupe/config.hpp"

/// Clauses of a run-time-length clause (`on_any` over a range) whose select
/// nodes live inside the statement, on the stack. A longer range allocates
/// its nodes once per statement (the only heap allocation waituntil makes).
#ifndef TROUPE_WAITUNTIL_RANGE_SLOTS
#define TROUPE_WAITUNTIL_RANGE_SLOTS 8
#endif

/// Pause instructions a statement with `&` spins, at its very end, waiting
/// for a resource that already completed one of its clauses to finish the
/// wake-up call, before it starts yielding instead.
#ifndef TROUPE_WAITUNTIL_DRAIN_SPINS
#define TROUPE_WAITUNTIL_DRAIN_SPINS 64
#endif

#include <cstddef>

namespace troupe::defaults {

inline constexpr std::size_t waituntil_range_slots = TROUPE_WAITUNTIL_RANGE_SLOTS;
inline constexpr int waituntil_drain_spins = TROUPE_WAITUNTIL_DRAIN_SPINS;

}  // namespace troupe::defaults
