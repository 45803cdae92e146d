#pragma once
/// Every tunable default of troupe core, in one place.
#include <cstddef>

namespace troupe::defaults {

/// Usable stack size of a user thread (a guard page is added below it).
/// Pages are committed lazily, so a large reservation costs address space only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr std::size_t stack_size = 256 * 1024;
#else
inline constexpr std::size_t stack_size = 128 * 1024;
#endif

/// Stacks of the default size kept for reuse after their thread is joined.
inline constexpr std::size_t stack_pool_limit = 4096;

/// Polls of the ready queues an idle processor makes before it sleeps.
inline constexpr int idle_spins = 256;

/// Polls of its permit an OS thread makes before it sleeps on the futex in
/// park(): a wake that comes within them (a lock hand-off, a reply) then costs
/// no system call on either side. Skipped on single-core machines.
inline constexpr int os_park_spins = 1000;

/// Free stacks each kernel thread keeps in front of the shared pool.
inline constexpr std::size_t stack_cache_per_thread = 8;

/// Spins of a `spinlock` before it starts yielding the kernel thread.
inline constexpr int spinlock_spins = 64;

}  // namespace troupe::defaults
