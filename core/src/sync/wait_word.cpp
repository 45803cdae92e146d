// The queue lock bit shared by the one-word primitives, and their misuse
// reports (stray wakes, destroyed while waited on).
#include "troupe/detail/wait_word.hpp"

#include <string>

#include "troupe/thread.hpp"

namespace troupe::detail {

void queue_backoff::pause() noexcept {
    // L is held for a few instructions, never across a park: spin briefly,
    // then yield in case its holder's kernel thread was descheduled.
    if (++spins < defaults::core::spinlock_spins) cpu_relax();
    else yield_now();
}

std::uintptr_t lock_queue(std::atomic<std::uintptr_t>& word) noexcept {
    queue_backoff b;
    std::uintptr_t w = word.load(std::memory_order_relaxed);
    for (;;) {
        if (w & queue_lock_bit) {
            b.pause();
            w = word.load(std::memory_order_relaxed);
            continue;
        }
        // acquire: the previous holder's queue writes (released by its
        // unlock_queue store) are visible to us.
        if (word.compare_exchange_weak(w, w | queue_lock_bit, std::memory_order_acquire,
                                       std::memory_order_relaxed))
            return w;
    }
}

void report_stray_wake(const char* kind, const char* name, const void* address) {
    report_misuse(describe(kind, name, address) +
                  ": a waiter was woken (unpark) before its operation completed (stray wake); "
                  "it waits again");
}

void report_destroyed_with_waiters(const char* kind, const char* name, const void* address,
                                   std::size_t waiters) {
    report_misuse(describe(kind, name, address) + ": destroyed while " + std::to_string(waiters) +
                  " thread(s) wait on it");
}

}  // namespace troupe::detail
