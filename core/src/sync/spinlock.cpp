// spinlock: the slow path and the checked-build ownership record.
#include "troupe/spinlock.hpp"

#include "troupe/context.hpp"
#include "troupe/error.hpp"
#include "troupe/thread.hpp"

namespace troupe {

void spinlock::lock_slow() noexcept {
    for (int spins = 0;;) {
        // Test before test-and-set: spin on a shared line, not on RMWs.
        while (flag_.load(std::memory_order_relaxed)) {
            if (spins < defaults::core::spinlock_spins) {
                // Back off between polls: every poll pulls the line into our
                // cache and makes the holder's next acquisition miss. Spaced
                // polls let the holder run several sections on a warm line
                // (channel 2+2 at 2 processors: 10 M/s with one pause per
                // poll, 53 M/s with 16; bench/RESULTS.md).
                for (int i = 0; i < defaults::core::spinlock_backoff_pauses; ++i)
                    detail::cpu_relax();
                ++spins;
            } else {
                // The holder may be descheduled: a user thread that yields
                // while holding it waits on our processor's ready queue.
                detail::yield_now();
            }
        }
        if (!flag_.exchange(true, std::memory_order_acquire)) break;
    }
    note_acquired();
}

#if defined(TROUPE_CHECKED)
void spinlock::note_acquired() noexcept { owner_ = &this_context(); }
bool spinlock::note_release() noexcept {
    if (owner_ != &this_context()) {
        detail::report_misuse(detail::describe("spinlock", name_, this) +
                              (flag_.load() ? ": unlocked by a thread that does not hold it"
                                            : ": unlocked while not held"));
        return false;
    }
    owner_ = nullptr;
    return true;
}
#endif

}  // namespace troupe
