// semaphore: one word (count | W | L), FIFO hand-off of units.
//
// Transitions (-> by CAS; "store" releases L):
//   acquire fast   c>0 -> c-1                     (L clear)
//   release fast   c -> c+n                       (W and L clear)
//   enqueue        0 -> 0|L (count is 0), push, store W
//   release slow   x -> x|L, pop up to n live waiters (each gets a unit),
//                  store (c + remainder) | W iff any still wait
// Invariants:
//   S1  count > 0 implies the queue is empty (units go to waiters first, and
//       a thread queues only when the count is 0, under L);
//   S2  a plain waiter completes when its node is granted, after the
//       releaser's last touch of the node (grant_list);
//   S3  a select waiter is woken after the new count is in the word (with L
//       still set), so its clause body never reads a count from before the
//       release that completed its clause.
#include "troupe/semaphore.hpp"

#include <string>

namespace troupe {

namespace {
// Dumps: the count and the queue (public snapshots; the queue length takes
// L for a few instructions).
std::string semaphore_details(const void* s) {
    auto* sem = static_cast<const semaphore*>(s);
    return "count " + std::to_string(sem->count()) + ", " + std::to_string(sem->waiters()) +
           " waiting";
}
const detail::wait_describer semaphore_wait_info{&semaphore_details, nullptr};
}  // namespace

semaphore::~semaphore() {
    if constexpr (checked_build) {
        if (word_.load(std::memory_order_acquire) & detail::waiters_bit)
            detail::report_destroyed_with_waiters("semaphore", name_, this, waiting_.size());
    }
}

bool semaphore::try_acquire() noexcept {
    detail::queue_backoff b;
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    for (;;) {
        if (w < unit) return false;  // no unit (S1: nothing else to look at)
        if (w & detail::queue_lock_bit) {
            b.pause();
            w = word_.load(std::memory_order_relaxed);
            continue;
        }
        if (word_.compare_exchange_weak(w, w - unit, std::memory_order_acquire,
                                        std::memory_order_relaxed))
            return true;
    }
}

void semaphore::acquire_slow() {
    select_node n{this_context()};
    detail::queue_backoff b;
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    for (;;) {
        if (w & detail::queue_lock_bit) {
            b.pause();
            w = word_.load(std::memory_order_relaxed);
            continue;
        }
        if (w >= unit) {
            if (word_.compare_exchange_weak(w, w - unit, std::memory_order_acquire,
                                            std::memory_order_relaxed))
                return;
            continue;
        }
        // Count 0: take L to queue (the count cannot grow while L is set:
        // release's fast CAS expects L clear).
        if (word_.compare_exchange_weak(w, w | detail::queue_lock_bit, std::memory_order_acquire,
                                        std::memory_order_relaxed))
            break;
    }
    waiting_.push_back(n);
    detail::unlock_queue(word_, w | detail::waiters_bit);
    // A releaser hands us a unit, then grants the node (S2).
    detail::park_until([&] { return n.granted(); }, "semaphore", name_, this, &semaphore_wait_info);
}

void semaphore::release_slow(std::size_t n) noexcept {
    detail::grant_list to_wake;
    const std::uintptr_t w = detail::lock_queue(word_);
    while (n > 0) {
        select_node* s = waiting_.pop_claimed();
        if (!s) break;
        to_wake.add(*s);  // the unit is s's now
        --n;
    }
    // Only what no waiter took reaches the count (S1); W iff any still wait.
    const std::uintptr_t count = (w >> detail::payload_shift) + n;
    const std::uintptr_t next = detail::with_waiters(count << detail::payload_shift, waiting_);
    // S3: the count is published (L still held) before a select waiter is
    // woken, so a clause body reads the count this release left.
    if (to_wake.has_selects()) {
        word_.store(next | detail::queue_lock_bit, std::memory_order_release);
        to_wake.wake_selects_locked();
    }
    detail::unlock_queue(word_, next);
    to_wake.grant_all();
}

std::size_t semaphore::waiters() const noexcept {
    const std::uintptr_t w = detail::lock_queue(word_);
    const std::size_t c = waiting_.size();
    detail::unlock_queue(word_, w);
    return c;
}

bool semaphore::register_select(select_node& n) noexcept {
    std::uintptr_t w = detail::lock_queue(word_);
    if (w >= unit) {
        // Win the statement before taking the unit.
        const bool won = n.try_claim();
        if (won) w -= unit;
        detail::unlock_queue(word_, w);
        return won;
    }
    waiting_.push_back(n);
    detail::unlock_queue(word_, w | detail::waiters_bit);
    return false;
}

bool semaphore::unregister_select(select_node& n) noexcept {
    const std::uintptr_t w = detail::lock_queue(word_);
    const bool was_queued = waiting_.remove(n);
    detail::unlock_queue(word_, detail::with_waiters(w, waiting_));
    // A unit handed to a general-mode clause whose body has not run must
    // still be accounted for by running it.
    if (was_queued || !n.is_general()) return false;
    return n.status_word()->load(std::memory_order_acquire) == std::uintptr_t(select_status::sat);
}

}  // namespace troupe
