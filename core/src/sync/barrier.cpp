// barrier: one word (phase | remaining | W | L).
//
// Transitions (-> by CAS; "store" releases L):
//   arrive       p|c -> p|c-n                    (L clear, c > n)
//   last arrive  p|n -> p|0 (L clear), run the completion, then
//                p|0 -> |L, pop every live waiter (select nodes woken
//                under L), store p+1|expected (W clear: the queue is empty)
//   wait(p)      phase p -> |L, push, store |W;  phase != p: return
// Invariants:
//   B1  the phase changes only in the last arrival's locked step, and the
//       queue holds only waiters of the current phase (they queue under L
//       after seeing the phase; the step pops them all before the new
//       phase is stored);
//   B2  a count of 0 with L clear means the completion is running: any
//       arrival then is one too many;
//   B3  broken_ is set before the phase step, so every waiter woken by it
//       and every later arrival sees it (release by the unlock store,
//       acquire by the waiter's grant or load).
#include "troupe/barrier.hpp"

#include <stdexcept>
#include <string>

#include "troupe/detail/stop_race.hpp"

namespace troupe {
namespace detail {

namespace {
std::string barrier_details(const void* p) {
    auto* b = static_cast<const barrier_base*>(p);
    const std::size_t expected = b->expected(), remaining = b->remaining();
    return "phase " + std::to_string(b->phase()) + ", " +
           std::to_string(expected > remaining ? expected - remaining : 0) + " of " +
           std::to_string(expected) + " arrived, " + std::to_string(b->waiters()) + " waiting" +
           (b->broken() ? ", broken" : "");
}
const wait_describer barrier_wait_info{&barrier_details, nullptr};
}  // namespace

barrier_base::barrier_base(std::ptrdiff_t expected, const char* name, complete_fn complete)
    : word_(0), expected_(0), name_(name), complete_(complete) {
    if (expected < 0 || expected > max())
        throw std::invalid_argument(describe("barrier", name, this) + ": expected count " +
                                    std::to_string(expected) + " out of range [0, " +
                                    std::to_string(max()) + "]");
    expected_.store(std::size_t(expected), std::memory_order_relaxed);
    word_.store(std::uintptr_t(expected) << payload_shift, std::memory_order_relaxed);
}

barrier_base::~barrier_base() {
    if constexpr (checked_build) {
        if (word_.load(std::memory_order_acquire) & waiters_bit)
            report_destroyed_with_waiters("barrier", name_, this, waiting_.size());
    }
}

void barrier_base::throw_broken() const {
    throw barrier_broken(describe("barrier", name_, this) +
                         ": broken (a completion function threw)");
}

barrier_base::arrival_token barrier_base::arrive(std::ptrdiff_t n) {
    if (broken()) throw_broken();
    if (n <= 0)
        throw std::invalid_argument(describe("barrier", name_, this) + ": arrive(" +
                                    std::to_string(n) + "): the count must be positive");
    const auto un = std::uintptr_t(n);
    queue_backoff b;
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    for (;;) {
        if (w & queue_lock_bit) {
            b.pause();
            w = word_.load(std::memory_order_relaxed);
            continue;
        }
        const std::uintptr_t c = count_of(w);
        if (c < un) {
            // B2 included: 0 while the completion runs.
            report_misuse(describe("barrier", name_, this) + ": " + std::to_string(n) +
                          " arrival(s) at phase " + std::to_string(phase_of(w)) + ", which " +
                          (c == 0 ? "is complete (its completion is running)"
                                  : "expects only " + std::to_string(c) + " more") +
                          " (too many arrivals); ignored");
            return arrival_token{phase_of(w)};
        }
        // acq_rel: release our phase's writes to the last arrival (RMWs on
        // the word form one release sequence); the last one acquires them all.
        if (word_.compare_exchange_weak(w, w - un * unit, std::memory_order_acq_rel,
                                        std::memory_order_relaxed)) {
            if (c == un) complete_phase(phase_of(w));
            return arrival_token{phase_of(w)};
        }
    }
}

void barrier_base::arrive_and_drop() {
    // Before the arrival, so the last arrival of this phase reads it (the
    // arrival's CAS releases it).
    expected_.fetch_sub(1, std::memory_order_relaxed);
    (void)arrive(1);
}

void barrier_base::complete_phase(std::uint32_t phase) {
    std::exception_ptr error;
    try {
        complete_(*this);
    } catch (...) {
        error = std::current_exception();
        broken_.store(true, std::memory_order_release);  // B3
    }
    lock_queue(word_);
    grant_list to_wake;
    const std::uintptr_t next =
        (std::uintptr_t(phase + 1) << phase_shift) |
        (std::uintptr_t(expected_.load(std::memory_order_relaxed)) << payload_shift);
    // B1: the new phase in the word (L still held) before a select waiter
    // is woken, so its body sees the phase complete.
    word_.store(next | queue_lock_bit, std::memory_order_release);
    while (select_node* s = waiting_.pop_claimed()) to_wake.add_published(*s);
    unlock_queue(word_, next);
    to_wake.grant_all();
    if (error) std::rethrow_exception(error);
}

void barrier_base::wait(arrival_token t) const {
    if (phase() != t.phase()) {
        if (broken()) throw_broken();
        return;
    }
    select_node n{this_context()};
    const std::uintptr_t w = lock_queue(word_);
    if (phase_of(w) != t.phase()) {
        unlock_queue(word_, w);
    } else {
        waiting_.push_back(n);
        unlock_queue(word_, w | waiters_bit);
        park_until([&] { return n.granted(); }, "barrier", name_, this, &barrier_wait_info);
    }
    if (broken()) throw_broken();
}

void barrier_base::wait(arrival_token t, const stop_token& tok) const {
    if (phase() != t.phase()) {
        if (broken()) throw_broken();
        return;
    }
    barrier_phase clause{*this, t.phase()};
    stop_race race{this_context()};
    if (!race.run(clause, tok, "barrier", name_, this, &barrier_wait_info))
        throw_cancelled("barrier", name_, this);
    clause.unregister_select(race.node());
    if (broken()) throw_broken();
}

std::size_t barrier_base::waiters() const noexcept {
    const std::uintptr_t w = lock_queue(word_);
    const std::size_t c = waiting_.size();
    unlock_queue(word_, w);
    return c;
}

bool barrier_base::register_phase(select_node& n, std::uint32_t phase) const noexcept {
    const std::uintptr_t w = lock_queue(word_);
    if (phase_of(w) != phase) {
        unlock_queue(word_, w);
        return n.try_claim();
    }
    waiting_.push_back(n);
    unlock_queue(word_, w | waiters_bit);
    return false;
}

void barrier_base::unregister_phase(select_node& n) const noexcept {
    const std::uintptr_t w = lock_queue(word_);
    waiting_.remove(n);
    unlock_queue(word_, with_waiters(w, waiting_));
}

}  // namespace detail

bool barrier_phase::on_selected(select_node&) {
    if (b_->broken()) {
        if (std::uncaught_exceptions() > 0) return false;
        throw barrier_broken(detail::describe("barrier", b_->name(), b_) +
                             ": broken (a completion function threw)");
    }
    return true;
}

}  // namespace troupe
