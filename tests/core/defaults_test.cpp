// expect-compile
// troupe's tunables convention (docs/architecture.md, "Tunables, settings
// and build choices"): every compile-time default lives in
// troupe::defaults::<module>, in the header troupe/defaults/<module>.hpp,
// and the build-option ones are initialised from troupe/config.hpp.
// Checked at compile time; tests/core/meson.build compiles this file with
// every module's headers (they need no library). The spellings without a
// module are gone: tests/core/defaults_old_spelling.cpp must not compile.
#include <chrono>
#include <type_traits>

#include "troupe/defaults/actors.hpp"
#include "troupe/defaults/channels.hpp"
#include "troupe/defaults/core.hpp"
#include "troupe/defaults/remote.hpp"
#include "troupe/defaults/waituntil.hpp"

namespace td = troupe::defaults;

// Each module's constants, by their one spelling.
static_assert(td::core::stack_size > 0 && td::core::spinlock_spins > 0);
static_assert(td::core::idle_spin.count() >= 0 && td::core::handoff_grace.count() > 0);
static_assert(td::actors::queues_per_worker > 0 && td::actors::placement_run > 0);

// channels and waituntil: the values come from troupe/config.hpp.
static_assert(td::channels::channel_wait_yields == TROUPE_CHANNEL_WAIT_YIELDS);
static_assert(td::channels::channel_wait_os_spins == TROUPE_CHANNEL_WAIT_OS_SPINS);
static_assert(td::waituntil::waituntil_range_slots == TROUPE_WAITUNTIL_RANGE_SLOTS);
static_assert(td::waituntil::waituntil_drain_spins == TROUPE_WAITUNTIL_DRAIN_SPINS);

// core's idle_spin (microseconds) and remote's (nanoseconds) are distinct.
static_assert(std::is_same_v<decltype(td::core::idle_spin), const std::chrono::microseconds>);
static_assert(std::is_same_v<decltype(td::remote::idle_spin), const std::chrono::nanoseconds>);
