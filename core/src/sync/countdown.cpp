// countdown (wait_group, latch): one word (count | W | L).
//
// Transitions (-> by CAS; "store" releases L):
//   add            c -> c+n                         (L clear)
//   count_down     c -> c-n                         (L clear; c-n > 0, or W clear)
//                  n|W -> 0|L, pop every live waiter (select nodes woken
//                  at once, L held), store 0 (the queue is empty)
//   wait           c>0 -> c|L, push, store c|W;  0: return
// Invariants:
//   C1  W implies count > 0 whenever L is clear (waiters queue only while
//       the count is positive, under L, and the step to zero takes L and
//       empties the queue);
//   C2  the zero count is in the word (published by the CAS that takes L)
//       before any waiter is woken: a woken select clause's body, and a
//       plain waiter, see count() == 0;
//   C3  a plain waiter completes when its node is granted, after the
//       waker's last touch of it (grant_list).
#include "troupe/detail/countdown.hpp"

#include <string>

#include "troupe/detail/stop_race.hpp"

namespace troupe::detail {

namespace {
std::string countdown_details(const void* p) {
    auto* c = static_cast<const countdown*>(p);
    return "count " + std::to_string(c->count()) + ", " + std::to_string(c->waiters()) + " waiting";
}
const wait_describer countdown_wait_info{&countdown_details, nullptr};
}  // namespace

countdown::~countdown() {
    if constexpr (checked_build) {
        if (word_.load(std::memory_order_acquire) & waiters_bit)
            report_destroyed_with_waiters(kind_, name_, this, waiting_.size());
    }
}

void countdown::add_slow(std::size_t n) noexcept {
    queue_backoff b;
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    for (;;) {
        if (w & queue_lock_bit) {
            b.pause();
            w = word_.load(std::memory_order_relaxed);
            continue;
        }
        if (word_.compare_exchange_weak(w, w + n * unit, std::memory_order_relaxed,
                                        std::memory_order_relaxed))
            return;
    }
}

void countdown::count_down_slow(std::size_t n, const char* what) {
    queue_backoff b;
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    for (;;) {
        if (w & queue_lock_bit) {
            b.pause();
            w = word_.load(std::memory_order_relaxed);
            continue;
        }
        const std::uintptr_t c = w >> payload_shift;
        if (c < n) {
            // Refused: the count would go negative (every build; the check
            // reads a value the CAS needs anyway).
            report_misuse(describe(kind_, name_, this) + ": " + what + " (count " +
                          std::to_string(c) + ", " + std::to_string(n) +
                          " subtracted); ignored, the count is unchanged");
            return;
        }
        if (c > n || !(w & waiters_bit)) {
            if (word_.compare_exchange_weak(w, w - n * unit, std::memory_order_release,
                                            std::memory_order_relaxed))
                return;
            continue;
        }
        // The step to zero with waiters: take L with the zero count in the
        // same CAS (C2). acq_rel: release our writes to the waiters, acquire
        // the queue the enqueuers released.
        if (word_.compare_exchange_weak(w, queue_lock_bit, std::memory_order_acq_rel,
                                        std::memory_order_relaxed))
            break;
    }
    grant_list to_wake;
    while (select_node* s = waiting_.pop_claimed()) to_wake.add_published(*s);
    unlock_queue(word_, 0);  // C1: the queue is empty
    to_wake.grant_all();
}

void countdown::wait_slow() {
    select_node n{this_context()};
    const std::uintptr_t w = lock_queue(word_);
    if ((w >> payload_shift) == 0) {
        unlock_queue(word_, w);
        return;
    }
    waiting_.push_back(n);
    unlock_queue(word_, w | waiters_bit);
    // The step to zero grants our node (C3).
    park_until([&] { return n.granted(); }, kind_, name_, this, &countdown_wait_info);
}

void countdown::wait(const stop_token& tok) {
    if (count() == 0) return;
    stop_race race{this_context()};
    if (!race.run(*this, tok, kind_, name_, this, &countdown_wait_info))
        throw_cancelled(kind_, name_, this);
    unregister_select(race.node());
}

std::size_t countdown::waiters() const noexcept {
    const std::uintptr_t w = lock_queue(word_);
    const std::size_t c = waiting_.size();
    unlock_queue(word_, w);
    return c;
}

bool countdown::register_select(select_node& n) noexcept {
    const std::uintptr_t w = lock_queue(word_);
    if ((w >> payload_shift) == 0) {
        unlock_queue(word_, w);
        return n.try_claim();
    }
    waiting_.push_back(n);
    unlock_queue(word_, w | waiters_bit);
    return false;
}

bool countdown::unregister_select(select_node& n) noexcept {
    const std::uintptr_t w = lock_queue(word_);
    waiting_.remove(n);
    unlock_queue(word_, with_waiters(w, waiting_));
    return false;
}

}  // namespace troupe::detail
