// future: one word (state | W | L); get and available on a ready future are
// one load.
//
// Transitions ("store" releases L):
//   fulfil     empty -> |L, store the value, store has_value|has_error
//              empty|W -> |L, store the value, store has_value|has_error|L,
//              pop every live waiter (waking select waiters at once),
//              store has_value|has_error (W clear: the queue is empty)
//   wait       empty[|W] -> |L, push, store empty|W; or (state set) store back
//   reset      x -> x|L, throw if W, clear the value, store empty
// Invariants:
//   F1  fulfil's final store (L clear) is its last touch of *this; the
//       destructor waits for L to be clear, so a thread that sees the state
//       may destroy the future (its waiters' nodes are on their own stacks);
//   F2  a plain waiter completes when its node is granted, after the
//       fulfiller's last touch of the node (grant_list);
//   F3  the state is published (with L still set) before any select waiter
//       is woken: a waituntil clause body always sees available().
#include "troupe/future.hpp"

#include <stdexcept>
#include <string>

#include "troupe/detail/stop_race.hpp"

namespace troupe::detail {

namespace {
std::string future_details(const void* f) {
    auto* fut = static_cast<const future_base*>(f);
    return std::string(fut->available() ? "fulfilled" : "not fulfilled") + ", " +
           std::to_string(fut->waiters()) + " waiting";
}
const wait_describer future_wait_info{&future_details, nullptr};
// Out of line and cold: the destructor's common case stays a load and a test.
[[gnu::noinline, gnu::cold]] void wait_for_queue_unlock(const std::atomic<std::uintptr_t>& word) {
    queue_backoff b;
    do b.pause();
    while (word.load(std::memory_order_acquire) & queue_lock_bit);
}
}  // namespace

future_base::~future_base() {
    // F1: a thread that saw the state (published under L, F3) may destroy
    // us while fulfil still wakes select waiters; wait for its last touch.
    if (word_.load(std::memory_order_acquire) & queue_lock_bit) [[unlikely]]
        wait_for_queue_unlock(word_);
    if constexpr (checked_build) {
        if (word_.load(std::memory_order_acquire) & waiters_bit)
            report_destroyed_with_waiters("future", nullptr, this, waiting_.size());
    }
}

void future_base::throw_already_fulfilled() const {
    throw future_error(describe("future", nullptr, this) +
                       ": fulfilled twice (reset() it before fulfilling again)");
}

bool future_base::publish_and_wake(std::uintptr_t w, std::uintptr_t new_state) noexcept {
    if (!(w & waiters_bit)) {
        unlock_queue(word_, new_state);  // F1: publishes the state; the last touch of *this
        return false;
    }
    // F3: the state first (L still held), then the waiters: a woken
    // waituntil runs the clause body at once, and the body must see the
    // future available.
    word_.store(new_state | queue_lock_bit, std::memory_order_release);
    grant_list to_wake;
    while (select_node* n = waiting_.pop_claimed()) to_wake.add_published(*n);
    const bool any = to_wake.size() > 0;
    unlock_queue(word_, new_state);  // F1: the last touch of *this
    to_wake.grant_all();
    return any;
}

bool future_base::fulfil_exception(std::exception_ptr e) {
    if (!e) throw std::invalid_argument("troupe::future::fulfil_exception: null exception_ptr");
    return deliver([&] { error_ = std::move(e); }, has_error);
}

void future_base::wait() {
    if (state() == empty) {
        select_node n{this_context()};
        const std::uintptr_t w = lock_queue(word_);
        if ((w & state_mask) == empty) {
            waiting_.push_back(n);
            unlock_queue(word_, w | waiters_bit);
            // fulfil publishes the state, then grants our node (F2).
            park_until([&] { return n.granted(); }, "future", nullptr, this, &future_wait_info);
        } else {
            unlock_queue(word_, w);
        }
    }
    if (state() == has_error) std::rethrow_exception(error_);
}

void future_base::wait(const stop_token& tok) {
    if (tok.stop_requested()) throw_cancelled("future", nullptr, this);
    if (state() == empty) {
        stop_race race{this_context()};
        if (!race.run(*this, tok, "future", nullptr, this, &future_wait_info))
            throw_cancelled("future", nullptr, this);
        unregister_select(race.node());  // dequeued by fulfil already: no effect
    }
    if (state() == has_error) std::rethrow_exception(error_);
}

std::size_t future_base::waiters() const noexcept {
    const std::uintptr_t w = lock_queue(word_);
    const std::size_t n = waiting_.size();
    unlock_queue(word_, w);
    return n;
}

void future_base::begin_reset() {
    const std::uintptr_t w = lock_queue(word_);
    if (w & waiters_bit) {
        const std::size_t n = waiting_.size();
        unlock_queue(word_, w);
        throw future_error(describe("future", nullptr, this) + ": reset while " +
                           std::to_string(n) + " thread(s) wait on it");
    }
}

void future_base::end_reset() noexcept {
    error_ = nullptr;
    unlock_queue(word_, empty);
}

bool future_base::register_select(select_node& n) noexcept {
    const std::uintptr_t w = lock_queue(word_);
    if (w & state_mask) {
        unlock_queue(word_, w);
        return n.try_claim();
    }
    waiting_.push_back(n);
    unlock_queue(word_, w | waiters_bit);
    return false;
}

bool future_base::unregister_select(select_node& n) noexcept {
    const std::uintptr_t w = lock_queue(word_);
    waiting_.remove(n);
    unlock_queue(word_, with_waiters(w, waiting_));
    return false;
}

}  // namespace troupe::detail
