#pragma once
/// Every tunable default of troupe core, in one place.
///
/// troupe's one convention for tunables: a compile-time default lives in
/// `troupe::defaults::<module>` (`core` here; `channels`, `waituntil`,
/// `actors`, `remote` in their modules' defaults headers), a run-time
/// setting in an options object (`cluster_options`, `actor_system_config`,
/// ...), a build-time choice in the generated `troupe/config.hpp`.
///
///     troupe::cluster_options o;
///     o.idle_spin = troupe::defaults::core::idle_spin / 2;
#include <chrono>
#include <cstddef>

namespace troupe::defaults {
namespace core {

/// Usable stack size of a user thread (a guard page is added below it).
/// Pages are committed lazily, so a large reservation costs address space only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr std::size_t stack_size = 256 * 1024;
#else
inline constexpr std::size_t stack_size = 128 * 1024;
#endif

/// Stacks of the default size kept for reuse after their thread is joined.
inline constexpr std::size_t stack_pool_limit = 4096;

/// Longest time an idle processor spins looking for work before it sleeps
/// (run-time setting: cluster_options::idle_spin, or the environment
/// variable TROUPE_IDLE_SPIN_US). The spin is adaptive below this bound: it
/// shrinks while spinning finds nothing, so a machine whose cores are busy
/// elsewhere does not pay for it.
inline constexpr std::chrono::microseconds idle_spin{50};

/// How long a thread woken by a user thread stays reserved for the waker's
/// processor (it runs there next) before an idle processor may steal it
/// (cluster_options::handoff_grace, or TROUPE_HANDOFF_GRACE_US).
inline constexpr std::chrono::microseconds handoff_grace{20};

/// Longest timed sleep of an idle processor that watches a hand-off it may
/// have to steal (the waker keeps computing); it doubles from the grace.
inline constexpr std::chrono::microseconds handoff_watch_max{1000};

/// A processor whose slot an OS thread holds between its waits
/// (lend_while_blocked) looks at its queue after this long asleep, doubling
/// up to 16 times this while nothing is left waiting there: work queued on
/// a slot its lender has not run for a whole look makes the processor's own
/// thread take the slot back (Go's sysmon retaking a P), so such work waits
/// about 2 to 32 ms at most, and a held slot costs its sleeping thread a
/// wake-up per look.
inline constexpr std::chrono::microseconds held_slot_look{1000};

/// Hand-offs a processor runs in a row before its queue gets a turn (so a
/// ping-ponging pair cannot starve the threads queued behind it).
inline constexpr unsigned handoff_streak = 64;

/// Most polls of its permit an OS thread makes before it sleeps on the futex
/// in park() (run-time: set_park_spin_policy, or TROUPE_PARK_SPIN). The
/// count is adaptive below this bound: it follows how long recent wakes took
/// to come and shrinks to os_park_min_spins while spinning does not pay.
/// Skipped when the process may run on one CPU only.
inline constexpr int os_park_spins = 1000;
/// Polls an adaptive park makes even when spinning has not paid recently.
inline constexpr int os_park_min_spins = 16;
/// Longest an OS thread keeps spinning in park() past its adaptive budget
/// while an idle poller says a reply is awaited (troupe-remote: an ask is
/// outstanding; troupe/detail/idle_poll.hpp, `awaited`). Past it, the thread
/// sleeps on its futex and the poller's own thread polls for it. Skipped
/// when the process may run on one CPU only, or os_park_spins is 0.
inline constexpr std::chrono::microseconds os_park_awaited_spin{2000};

/// Free stacks each kernel thread keeps in front of the shared pool.
inline constexpr std::size_t stack_cache_per_thread = 8;

/// Polls of a `spinlock` (and of the queue-lock bit of the one-word
/// primitives) before it starts yielding.
inline constexpr int spinlock_spins = 64;
/// Pauses a contended `spinlock` waits between two polls of the lock word.
/// Measured, not derived (a channel hammered by 2 producers and 2 consumers
/// on 2 processors, side by side in one session): 1 pause 9-10 M/s, 8
/// pauses 44 M/s, 16 pauses 54-56 M/s, 32 or 64 unsteady (16-63 M/s).
inline constexpr int spinlock_backoff_pauses = 16;

/// How long a `barging_lock` waiter may wait before an unlock hands it the
/// lock instead of letting running threads barge (Go's `sync.Mutex`
/// starvation threshold, `starvationThresholdNs`).
inline constexpr std::chrono::microseconds barging_starvation{1000};

/// Polls of the lock word a `barging_lock` waiter on an OS thread makes
/// before it queues (barging_lock::options::spins; a user thread never
/// spins: it queues at once and gives its processor away). The pauses
/// between two polls double from 1 to barging_spin_max_gap, so the spin
/// lasts about 160 pauses (4 us on a 2026 EPYC, whose pause takes 25 ns):
/// of the order of a futex sleep and wake, which it replaces when the lock
/// comes free meanwhile. Measured, not derived (two OS threads hammering a
/// tiny critical section, side by side in one session, ns per acquisition
/// with the cycle counter read around each:
/// no spin 180-240; a poll every pause for 100 polls 65-100; 4 polls 30
/// pauses apart, Go's sync.Mutex, 34-44; 9 polls doubling to 32, 37-39 with
/// a lower p99 wait; `std::mutex` 95-110).
inline constexpr int barging_spins = 9;
/// Most pauses between two polls of a spinning `barging_lock` waiter.
inline constexpr int barging_spin_max_gap = 32;

/// Tasks a fork-join worker's deque holds (troupe/parallel.hpp); a fork
/// beyond it runs inline. Loops and balanced recursions need about their
/// depth; a power of two.
inline constexpr std::size_t fork_join_deque = 1024;

/// Failed steal attempts (a pause between two) a fork-join worker makes
/// before it parks: a helper with nothing to steal, a forker whose task was
/// stolen. Each attempt looks at every worker of the region once.
inline constexpr unsigned fork_join_spins = 2000;

/// Stack a fork-join call keeps in reserve: when fewer bytes than this are
/// left below it on the calling worker's stack, the call continues on a
/// fresh user-thread stack (a new segment) instead of overflowing, so a
/// recursion of fork_join calls may go deeper than one stack holds.
inline constexpr std::size_t fork_join_stack_reserve = stack_size / 4;

}  // namespace core
}  // namespace troupe::defaults
