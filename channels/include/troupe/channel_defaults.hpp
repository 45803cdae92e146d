#pragma once
/// Every tunable default of troupe channels, in one place. Each is a build
/// option of troupe (meson -Dchannel_wait_yields=N, ...) carried by
/// troupe/config.hpp, so every translation unit sees the same value.
#include "troupe/config.hpp"

/// Yields a user thread makes, waiting for a channel partner, before it
/// parks. Default 0: parking at once lets the scheduler's hand-off placement
/// put the waiter on its partner's processor, so a producer/consumer pair
/// ends up sharing one core and its cache (see docs/channels.md). A yield
/// window keeps a pair on two cores instead (each element crosses cores).
#ifndef TROUPE_CHANNEL_WAIT_YIELDS
#define TROUPE_CHANNEL_WAIT_YIELDS 0
#endif

/// Pause instructions an OS thread (which has no cheap yield) spins on its
/// wait record before it parks on its futex (a pause costs ~36 ns on this
/// project's machines, so about 2 us: less than a futex sleep and wake).
#ifndef TROUPE_CHANNEL_WAIT_OS_SPINS
#define TROUPE_CHANNEL_WAIT_OS_SPINS 64
#endif

namespace troupe::defaults {

inline constexpr int channel_wait_yields = TROUPE_CHANNEL_WAIT_YIELDS;
inline constexpr int channel_wait_os_spins = TROUPE_CHANNEL_WAIT_OS_SPINS;

}  // namespace troupe::defaults
