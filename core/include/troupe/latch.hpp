#pragma once
/// A single-use countdown, with std::latch's meaning.
///
///     troupe::latch ready{workers};
///     // each worker:  init(); ready.count_down();
///     ready.wait();               // parks until every worker counted down
///
/// `count_down(n)` lowers the counter, `wait()` parks until it is zero,
/// `arrive_and_wait(n)` does both, `try_wait()` polls. Blocking works from
/// user threads and OS threads alike. Selectable: in waituntil, `on(l, body)`
/// runs the body once the counter is zero.
///
/// Counting down past zero (undefined behaviour for std::latch) is a misuse
/// report of kind `error` in every build, naming the latch; by default the
/// program aborts, and if a custom handler returns, the call changed
/// nothing. Checked builds also report a latch destroyed while threads
/// wait on it.
///
/// Cost: one atomic word (docs/locks.md): `count_down` with nobody waiting
/// is one CAS, `try_wait` one load.
#include <cstddef>
#include <limits>

#include "troupe/detail/countdown.hpp"

namespace troupe {

/// Besides the members below, wait(), wait(stop_token), count(),
/// waiters(), name() and the select protocol, from detail::countdown_waits
/// (troupe/detail/countdown.hpp).
class latch : public detail::countdown_waits {
public:
    /// A latch expecting `expected` count-downs; `name` (not copied) names
    /// it in dumps and misuse reports.
    explicit latch(std::size_t expected, const char* name = nullptr) noexcept
        : countdown_waits(expected, "latch", name) {}
    latch(const latch&) = delete;
    latch& operator=(const latch&) = delete;

    /// The largest counter supported.
    static constexpr std::size_t max() noexcept {
        return std::numeric_limits<std::uintptr_t>::max() >> detail::payload_shift;
    }

    /// Lowers the counter by `n`; reaching zero wakes every waiter. Never
    /// blocks. Throws nothing but what a custom misuse handler throws
    /// (past zero; nothing changed).
    void count_down(std::size_t n = 1) {
        c_.count_down(n, "counted down past zero (more count_down()s than expected)");
    }
    /// Whether the counter is zero (acquire: the count-downs' writes are
    /// visible when it is). Never blocks; nothrow.
    bool try_wait() const noexcept { return c_.count() == 0; }
    /// count_down(n), then wait().
    void arrive_and_wait(std::size_t n = 1) {
        count_down(n);
        c_.wait();
    }
};

static_assert(selectable<latch>);

}  // namespace troupe
