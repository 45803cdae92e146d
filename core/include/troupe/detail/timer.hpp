#pragma once
// The one timer facility behind sleep_for, timed waits and timeout(d).
//
// A timer node lives on the waiting thread's stack. Arming inserts it into a
// min-heap; a service thread sleeps on a futex until the earliest deadline
// (it uses no CPU while waiting) and runs expired callbacks under the heap
// lock. Callbacks must not block: they CAS a wait node and unpark.
#include <chrono>
#include <cstddef>

namespace troupe::detail {

struct timer_node {
    using clock = std::chrono::steady_clock;
    clock::time_point deadline{};
    void (*fire)(timer_node&) noexcept = nullptr;
    void* arg = nullptr;  // for the callback
    // Periodic timers (ticker): > 0 re-arms the node at the next multiple
    // of `period` after the current time, before the callback runs (under
    // the service's lock, so a cancel never misses it); ticks that fell
    // due meanwhile are skipped, not queued.
    clock::duration period{};
    std::size_t heap_index = npos;  // position in the heap; npos when not armed
    static constexpr std::size_t npos = ~std::size_t{0};
};

/// Arms `n` (its deadline and callback set). The callback may run on the
/// service thread at any moment after this, including before it returns.
/// A periodic node (period > 0) fires until cancelled.
void timer_arm(timer_node& n);

/// Disarms `n`. Returns true if it was still armed (the callback will never
/// run). Returns false if it already fired; in both cases the callback is not
/// running any more when this returns, so `n` may be destroyed.
bool timer_cancel(timer_node& n) noexcept;

/// Timers armed now (a snapshot; 0 if the timer service never started).
/// For the everyone-asleep check: a pending timer will wake someone.
std::size_t timer_pending() noexcept;
/// Whether the timer service's thread exists.
bool timer_thread_started() noexcept;

}  // namespace troupe::detail
