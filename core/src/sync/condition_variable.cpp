// condition_variable: one word (W | L), wait morphing onto troupe's locks.
//
// Transitions ("store" releases L):
//   enqueue     x -> x|L, push, store W
//   notify      0 (no W): return, no lock;  W -> W|L, pop live waiter(s),
//               store W iff any remain, then wake them outside L
//   timeout     (timer) claim the node, set timed_out, unpark; the waiter
//               dequeues itself: x -> x|L, remove, store W iff any remain
// Invariants:
//   C1  W is set iff the queue is non-empty whenever L is clear; a waiter
//       queues before it releases the user's lock;
//   C2  exactly one of notifier and timer wins a waiter's node (try_claim);
//       the loser never touches the waiter;
//   C3  the winner's last touch of the waiter is what completes the wait
//       (result store, or the lock naming the waiter), so a stray wake
//       never lets the waiter leave while it is still being touched; the
//       notify_all list unlinks each node before its wake.
#include "troupe/condition_variable.hpp"

namespace troupe {

condition_variable::~condition_variable() {
    if constexpr (checked_build) {
        if (word_.load(std::memory_order_acquire) & detail::waiters_bit)
            detail::report_destroyed_with_waiters("condition_variable", nullptr, this,
                                                  waiting_.size());
    }
}

void condition_variable::enqueue(waiter& w) noexcept {
    detail::lock_queue(word_);
    waiting_.push_back(w.node);
    detail::unlock_queue(word_, detail::waiters_bit);  // C1
}

bool condition_variable::finish(waiter& w, bool timed) noexcept {
    if (timed) detail::timer_cancel(w.timer);  // after this no callback runs
    // Notifier and timer both claim our exclusive node; exactly one won (C2),
    // and only the timer sets timed_out. If the timer won we may still be queued.
    if (w.result.load(std::memory_order_acquire) != outcome::timed_out) return true;
    detail::lock_queue(word_);
    waiting_.remove(w.node);
    detail::unlock_queue(word_, detail::with_waiters(0, waiting_));
    return false;
}

void condition_variable::on_timeout(detail::timer_node& t) noexcept {
    // Runs under the timer lock; the waiter's timer_cancel waits for it.
    auto& w = *static_cast<waiter*>(t.arg);
    if (w.node.try_claim()) {
        context& c = w.node.waiter();
        detail::wake_guard g{c};  // the waiter may leave on the store, before the unpark
        w.result.store(outcome::timed_out, std::memory_order_release);  // C3
        unpark(c);
    }
}

void condition_variable::wake(waiter& w) noexcept {
    if (w.morph) {
        // The lock's hand-off (or its grant, if free) names w as the owner
        // and unparks it (C3).
        w.morph->cv_enqueue_or_grant(w.lock_node);
        return;
    }
    context& c = w.node.waiter();
    detail::wake_guard g{c};  // the waiter may leave on the store, before the unpark
    w.result.store(outcome::notified, std::memory_order_release);  // C3: last touch
    unpark(c);
}

bool condition_variable::notify_one_slow() noexcept {
    detail::lock_queue(word_);
    select_node* n = waiting_.pop_claimed();  // C2: skip nodes the timer won
    detail::unlock_queue(word_, detail::with_waiters(0, waiting_));
    if (!n) return false;
    wake(n->record<waiter>());
    return true;
}

bool condition_variable::notify_all_slow() noexcept {
    node_queue woken;  // the claimed waiters, woken after L is released
    detail::lock_queue(word_);
    while (select_node* n = waiting_.pop_claimed()) woken.push_back(*n);
    detail::unlock_queue(word_, detail::with_waiters(0, waiting_));
    const bool any = !woken.empty();
    // C3: each node leaves `woken` (which writes only the next node's
    // links) before its wake, our last touch of it.
    while (select_node* n = woken.pop_front()) wake(n->record<waiter>());
    return any;
}

}  // namespace troupe
