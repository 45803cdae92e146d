// spinlock: the slow path and the checked-build ownership record.
#include "troupe/spinlock.hpp"

#include <thread>

#include "troupe/context.hpp"
#include "troupe/detail/wake_guard.hpp"
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
            } else if (detail::this_thread_wake_slot().target.load(std::memory_order_relaxed)) {
                // Inside a wake's announcement (troupe/detail/wake_guard.hpp),
                // which must span no switch point: a user thread switched
                // out there left its kernel thread's slot announcing, and
                // another thread's guard on that kernel thread then saved
                // and restored the stale announcement, so the woken
                // thread's end waited for it forever (waituntil/channels
                // hung under TSan; a ready queue's lock had outlasted the
                // spins). The locks a wake takes (a processor's ready
                // queue) are never held across a switch, so the holder
                // runs again without our processor: yield the kernel
                // thread only.
                std::this_thread::yield();
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
