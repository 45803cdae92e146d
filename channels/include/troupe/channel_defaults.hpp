#pragma once
/// Every tunable default of troupe channels, in one place. Each is a build
/// option of troupe (meson -Dchannel_wait_yields=N, ...) carried by
/// troupe/config.hpp, so every translation unit sees the same value.
#include "troupe/config.hpp"

/// A user thread that must wait for a channel partner first yields this many
/// times (letting other user threads of its processor run, often the very
/// partner) before it parks. When the partner completes the operation during
/// that window, its wake only banks a permit: no ready-queue push, no
/// processor wake-up. A yield on an otherwise idle processor costs about a
/// tenth of a microsecond. (Pause-instruction spinning was measured far
/// slower on this project's virtual machines, so user threads do not spin.)
#ifndef TROUPE_CHANNEL_WAIT_YIELDS
#define TROUPE_CHANNEL_WAIT_YIELDS 16
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
