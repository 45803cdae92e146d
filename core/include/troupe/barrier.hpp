#pragma once
/// A reusable phase barrier with a completion function, with std::barrier's
/// meaning.
///
///     troupe::barrier sync{workers, [&]() noexcept { ++generation; }};
///     // each worker, each step:
///     compute(step);
///     sync.arrive_and_wait();   // the last arrival runs the completion,
///                               // then everyone goes on to the next phase
///
/// Each phase expects `expected` arrivals. The last arrival of a phase runs
/// the completion function on its own thread, then wakes every thread
/// waiting for that phase, and the next phase begins with the expected
/// count (less those that left with `arrive_and_drop`). `arrive()` returns
/// an arrival_token for `wait(token)`; waiting is parking, from user
/// threads and OS threads alike. Selectable: in waituntil,
/// `on(b.phase_done(token), body)` runs the body once that phase completed.
///
/// A completion function that throws (std::barrier requires it not to):
/// the phase still completes, so no waiter hangs, but the barrier is
/// *broken*: the exception propagates from the arrival that ran the
/// completion (arrive or arrive_and_wait), every thread waiting for that
/// phase, and every later arrive or wait, throws `barrier_broken` (Java's
/// CyclicBarrier does the same). A broken barrier stays broken.
///
/// More arrivals in one phase than it expects (undefined behaviour for
/// std::barrier) is a misuse report of kind `error` in every build, naming
/// the barrier; by default the program aborts, and if a custom handler
/// returns, the arrival had no effect (its token waits for the current
/// phase). Checked builds also report a barrier destroyed while threads
/// wait on it.
///
/// Cost: one atomic word holds the phase, the arrivals still expected, a
/// waiters flag and the queue lock (docs/locks.md); an arrival that is not
/// the last is one CAS.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <utility>

#include "troupe/detail/wait_word.hpp"
#include "troupe/select.hpp"
#include "troupe/stop_token.hpp"

namespace troupe {

/// Thrown by arrivals and waits on a barrier whose completion function
/// threw (see barrier).
class barrier_broken : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class barrier_phase;

namespace detail {

class barrier_base {
public:
    /// Names one phase of one barrier, for wait().
    class arrival_token {
    public:
        arrival_token() noexcept = default;
        std::uint32_t phase() const noexcept { return phase_; }

    private:
        friend class barrier_base;
        explicit arrival_token(std::uint32_t p) noexcept : phase_(p) {}
        std::uint32_t phase_ = 0;
    };

    barrier_base(const barrier_base&) = delete;
    barrier_base& operator=(const barrier_base&) = delete;

    /// The largest expected count supported.
    static constexpr std::ptrdiff_t max() noexcept { return std::ptrdiff_t(count_mask); }

    /// Arrives `n` times at the current phase and returns its token. The
    /// last arrival runs the completion function and wakes the waiters (so
    /// it may throw what the completion throws; the barrier is then broken).
    /// Throws barrier_broken on a broken barrier. Never blocks otherwise.
    [[nodiscard]] arrival_token arrive(std::ptrdiff_t n = 1);
    /// Parks until the phase of `t` completed. Returns at once if it has.
    /// Throws barrier_broken if the barrier is (or becomes) broken.
    void wait(arrival_token t) const;
    /// As wait(t), but throws `cancelled` if `tok` is stopped before the
    /// phase completed (nothing changed: the arrival stands).
    void wait(arrival_token t, const stop_token& tok) const;
    /// arrive(1), then wait for that phase.
    void arrive_and_wait() { wait(arrive(1)); }
    /// Arrives once at the current phase and lowers the expected count of
    /// every later phase by one. Never blocks.
    void arrive_and_drop();

    /// A select clause: available once the phase of `t` completed.
    [[nodiscard]] barrier_phase phase_done(arrival_token t) noexcept;

    /// Whether a completion function threw (see barrier). nothrow.
    bool broken() const noexcept { return broken_.load(std::memory_order_acquire); }
    /// The current phase number (wraps at 2^32; a snapshot).
    std::uint32_t phase() const noexcept {
        return std::uint32_t(word_.load(std::memory_order_acquire) >> phase_shift);
    }
    /// Arrivals the current phase still expects (a snapshot).
    std::size_t remaining() const noexcept {
        return (word_.load(std::memory_order_acquire) >> payload_shift) & count_mask;
    }
    /// Arrivals each phase expects now.
    std::size_t expected() const noexcept { return expected_.load(std::memory_order_relaxed); }
    /// Threads (and select clauses) waiting (a snapshot).
    std::size_t waiters() const noexcept;
    const char* name() const noexcept { return name_; }

    // The select protocol for barrier_phase.
    bool register_phase(select_node& n, std::uint32_t phase) const noexcept;
    void unregister_phase(select_node& n) const noexcept;

protected:
    using complete_fn = void (*)(barrier_base&);
    barrier_base(std::ptrdiff_t expected, const char* name, complete_fn complete);
    ~barrier_base();

private:
    static constexpr int phase_shift = 32;
    static constexpr std::uintptr_t count_mask =
        (std::uintptr_t{1} << (phase_shift - payload_shift)) - 1;
    static constexpr std::uintptr_t unit = std::uintptr_t{1} << payload_shift;
    static std::uint32_t phase_of(std::uintptr_t w) noexcept {
        return std::uint32_t(w >> phase_shift);
    }
    static std::uintptr_t count_of(std::uintptr_t w) noexcept {
        return (w >> payload_shift) & count_mask;
    }
    void complete_phase(std::uint32_t phase);
    void throw_broken() const;

    // phase << 32 | remaining << 2 | W | L (docs/locks.md). The phase in
    // the same word as the count makes an arrival's CAS name the phase it
    // arrived at (no ABA across a phase).
    mutable std::atomic<std::uintptr_t> word_;
    std::atomic<std::size_t> expected_;
    std::atomic<bool> broken_{false};
    mutable node_queue waiting_;  // under L
    const char* name_;
    complete_fn complete_;
};

}  // namespace detail

/// Select clause of a barrier: available once one phase completed.
/// Returned by barrier::phase_done(token).
class barrier_phase {
public:
    barrier_phase(const detail::barrier_base& b, std::uint32_t phase) noexcept
        : b_(&b), phase_(phase) {}
    bool register_select(select_node& n) noexcept { return b_->register_phase(n, phase_); }
    bool unregister_select(select_node& n) noexcept {
        b_->unregister_phase(n);
        return false;
    }
    /// Throws barrier_broken if the completion of that phase threw (not
    /// while an exception unwinds: then the body is skipped).
    bool on_selected(select_node&);
    bool select_ready_hint() const noexcept { return b_->phase() != phase_; }
    const char* select_kind() const noexcept { return "barrier"; }
    const char* select_name() const noexcept { return b_->name(); }
    const void* select_resource() const noexcept { return b_; }

private:
    const detail::barrier_base* b_;
    std::uint32_t phase_;
};

inline barrier_phase detail::barrier_base::phase_done(arrival_token t) noexcept {
    return barrier_phase{*this, t.phase()};
}

/// The completion function of a barrier that needs none.
struct noop_completion {
    void operator()() const noexcept {}
};

template <class CompletionFunction = noop_completion>
class barrier : public detail::barrier_base {
public:
    /// A barrier whose phases expect `expected` arrivals (0 <= expected <=
    /// max(); std::invalid_argument otherwise), running `f` at the end of
    /// each phase. `name` (not copied) names it in dumps and misuse reports.
    explicit barrier(std::ptrdiff_t expected, CompletionFunction f = CompletionFunction(),
                     const char* name = nullptr)
        : barrier_base(expected, name, &run_completion), f_(std::move(f)) {}

private:
    static void run_completion(barrier_base& b) { static_cast<barrier&>(b).f_(); }
    CompletionFunction f_;
};

barrier(std::ptrdiff_t)->barrier<>;
template <class F>
barrier(std::ptrdiff_t, F) -> barrier<F>;
template <class F>
barrier(std::ptrdiff_t, F, const char*) -> barrier<F>;

static_assert(selectable<barrier_phase>);

}  // namespace troupe
