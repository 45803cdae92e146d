#pragma once
/// Every tunable default of troupe channels, in one place:
/// `troupe::defaults::channels` (troupe's tunables convention is described
/// in troupe/defaults/core.hpp).
///
/// Each is a build option of troupe (meson -Dchannel_wait_yields=N, ...)
/// carried by the generated troupe/config.hpp as TROUPE_CHANNEL_*, so every
/// translation unit sees the same value; use the constants, not the macros.
#include "troupe/config.hpp"

namespace troupe::defaults {
namespace channels {

/// Yields a user thread makes, waiting for a channel partner, before it
/// parks. Default 0: parking at once lets the scheduler's hand-off placement
/// put the waiter on its partner's processor, so a producer/consumer pair
/// ends up sharing one core and its cache (see docs/channels.md). A yield
/// window keeps a pair on two cores instead (each element crosses cores).
inline constexpr int channel_wait_yields = TROUPE_CHANNEL_WAIT_YIELDS;

/// Pause instructions an OS thread (which has no cheap yield) spins on its
/// wait record before it parks on its futex (a pause costs ~36 ns on this
/// project's machines, so about 2 us: less than a futex sleep and wake).
inline constexpr int channel_wait_os_spins = TROUPE_CHANNEL_WAIT_OS_SPINS;

}  // namespace channels
}  // namespace troupe::defaults
