// expect-compile
// troupe's tunables convention (docs/architecture.md, "Tunables, settings
// and build choices"): every compile-time default lives in
// troupe::defaults::<module>, and each older spelling the docs promised
// still names the very same constant (no copy). Checked at compile time;
// tests/core/meson.build compiles this file with every module's headers
// (they need no library), so a spelling that stops compiling, or that
// starts naming a copy, fails the test.
#include <chrono>
#include <type_traits>

#include "troupe/actor_defaults.hpp"
#include "troupe/channel_defaults.hpp"
#include "troupe/defaults.hpp"
#include "troupe/remote/remote_defaults.hpp"
#include "troupe/waituntil_defaults.hpp"

// `older` and `current` are one object: the same address.
#define SAME_CONSTANT(older, current) \
    static_assert(&(older) == &(current), #older " must name " #current)

namespace td = troupe::defaults;

// core: defaults::core is inline, so defaults::X is defaults::core::X.
SAME_CONSTANT(td::stack_size, td::core::stack_size);
SAME_CONSTANT(td::stack_pool_limit, td::core::stack_pool_limit);
SAME_CONSTANT(td::idle_spin, td::core::idle_spin);
SAME_CONSTANT(td::handoff_grace, td::core::handoff_grace);
SAME_CONSTANT(td::handoff_watch_max, td::core::handoff_watch_max);
SAME_CONSTANT(td::handoff_streak, td::core::handoff_streak);
SAME_CONSTANT(td::os_park_spins, td::core::os_park_spins);
SAME_CONSTANT(td::os_park_min_spins, td::core::os_park_min_spins);
SAME_CONSTANT(td::stack_cache_per_thread, td::core::stack_cache_per_thread);
SAME_CONSTANT(td::spinlock_spins, td::core::spinlock_spins);
SAME_CONSTANT(td::spinlock_backoff_pauses, td::core::spinlock_backoff_pauses);

// channels and waituntil: inline too; the values come from troupe/config.hpp.
SAME_CONSTANT(td::channel_wait_yields, td::channels::channel_wait_yields);
SAME_CONSTANT(td::channel_wait_os_spins, td::channels::channel_wait_os_spins);
static_assert(td::channels::channel_wait_yields == TROUPE_CHANNEL_WAIT_YIELDS);
static_assert(td::channels::channel_wait_os_spins == TROUPE_CHANNEL_WAIT_OS_SPINS);
SAME_CONSTANT(td::waituntil_range_slots, td::waituntil::waituntil_range_slots);
SAME_CONSTANT(td::waituntil_drain_spins, td::waituntil::waituntil_drain_spins);
static_assert(td::waituntil::waituntil_range_slots == TROUPE_WAITUNTIL_RANGE_SLOTS);
static_assert(td::waituntil::waituntil_drain_spins == TROUPE_WAITUNTIL_DRAIN_SPINS);

// actors: troupe::actor_defaults is an alias of troupe::defaults::actors.
namespace ta = troupe::actor_defaults;
SAME_CONSTANT(ta::queues_per_worker, td::actors::queues_per_worker);
SAME_CONSTANT(ta::placement_run, td::actors::placement_run);
SAME_CONSTANT(ta::copy_queue_capacity, td::actors::copy_queue_capacity);
SAME_CONSTANT(ta::copy_queue_min_capacity, td::actors::copy_queue_min_capacity);
SAME_CONSTANT(ta::copy_queue_reclaim_window, td::actors::copy_queue_reclaim_window);
SAME_CONSTANT(ta::steal_every_passes, td::actors::steal_every_passes);
SAME_CONSTANT(ta::steal_backoff_max_passes, td::actors::steal_backoff_max_passes);
SAME_CONSTANT(ta::helper_wake_batch, td::actors::helper_wake_batch);
SAME_CONSTANT(ta::batch_append_budget, td::actors::batch_append_budget);
SAME_CONSTANT(ta::prefetch_distance, td::actors::prefetch_distance);
SAME_CONSTANT(ta::long_batch_ticks, td::actors::long_batch_ticks);
SAME_CONSTANT(ta::busy_park_period, td::actors::busy_park_period);
SAME_CONSTANT(ta::idle_passes_before_park, td::actors::idle_passes_before_park);
SAME_CONSTANT(ta::stop_report_period, td::actors::stop_report_period);
SAME_CONSTANT(ta::helper_wake_interval_us, td::actors::helper_wake_interval_us);

// remote is not inline: defaults::idle_spin stays core's (microseconds),
// remote's is its own (nanoseconds).
static_assert(std::is_same_v<decltype(td::idle_spin), const std::chrono::microseconds>);
static_assert(std::is_same_v<decltype(td::remote::idle_spin), const std::chrono::nanoseconds>);
