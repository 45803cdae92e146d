#pragma once
/// Go's sync.WaitGroup: wait until a set of tasks has finished.
///
///     troupe::wait_group wg;
///     for (auto& job : jobs) {
///         wg.add();
///         pool.emplace_back([&] { run(job); wg.done(); });
///     }
///     wg.wait();                    // parks until every done() was called
///
/// `add(n)` raises the counter, `done()` lowers it by one, `wait()` parks
/// until it is zero (from user threads and OS threads alike). A group is
/// reusable once its counter is back to zero. Selectable: in waituntil,
/// `on(wg, body)` runs the body once the counter is zero.
///
/// Misuse is reported in every build (the check reads a value the
/// operation needs anyway): `done()` with the counter at zero (a done
/// without a matching add; Go panics: "negative WaitGroup counter") is a
/// misuse report of kind `error` naming the group; by default the program
/// aborts, and if a custom handler returns, the call changed nothing.
/// Checked builds also report a group destroyed while threads wait on it.
///
/// Cost: the counter, a waiters flag and the queue lock share one atomic
/// word (docs/locks.md). `add`, `done` with nobody waiting and `wait` on a
/// zero counter are one CAS, one CAS and one load.
#include <cstddef>

#include "troupe/detail/countdown.hpp"

namespace troupe {

/// Besides the members below, wait(), wait(stop_token), count(),
/// waiters(), name() and the select protocol, from detail::countdown_waits
/// (troupe/detail/countdown.hpp).
class wait_group : public detail::countdown_waits {
public:
    /// A group with counter `initial`; `name` (not copied) names it in dumps
    /// and misuse reports.
    explicit wait_group(std::size_t initial = 0, const char* name = nullptr) noexcept
        : countdown_waits(initial, "wait_group", name) {}
    wait_group(const wait_group&) = delete;
    wait_group& operator=(const wait_group&) = delete;

    /// Adds `n` to the counter. Call it before starting what will call
    /// done(), not from inside it (as in Go, an add racing a wait that
    /// found the counter zero is a program error). Never blocks; nothrow.
    void add(std::size_t n = 1) noexcept { c_.add(n); }
    /// Subtracts one; the done() that brings the counter to zero wakes every
    /// waiter. Never blocks. Throws nothing but what a custom misuse handler
    /// throws (done without add; see above: nothing changed).
    void done() {
        c_.count_down(1, "done() without a matching add() (the counter would go negative)");
    }
};

static_assert(selectable<wait_group>);

}  // namespace troupe
