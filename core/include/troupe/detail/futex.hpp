#pragma once
// Thin wrappers over the Linux futex: the one way an OS thread sleeps.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace troupe::detail {

/// Sleeps while `word == expected`; returns on wake, spurious wake or signal.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept;
/// As futex_wait, but gives up at `deadline` (steady clock).
void futex_wait_until(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                      std::chrono::steady_clock::time_point deadline) noexcept;
/// Wakes up to `count` sleepers on `word`.
void futex_wake(std::atomic<std::uint32_t>& word, int count = 1) noexcept;

/// A pause hint for spin loops.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

}  // namespace troupe::detail
