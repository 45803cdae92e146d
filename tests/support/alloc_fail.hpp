#pragma once
// Allocation-failure injection for seam tests. The test support library
// replaces the global operator new/delete; while a fail_allocation guard is
// alive, the n-th allocation made by the context that created it (a user
// thread, followed across processors, or an OS thread) fails: the throwing
// forms throw std::bad_alloc, the nothrow forms return nullptr. Allocations
// by every other context are untouched. One guard at a time per process.
#include <cstddef>
#include <new>

namespace troupe_test {

class fail_allocation {
public:
    /// Arms the injector: the `n`-th (1-based) allocation of this context fails.
    explicit fail_allocation(std::size_t n) noexcept;
    /// Disarms it.
    ~fail_allocation();
    fail_allocation(const fail_allocation&) = delete;
    fail_allocation& operator=(const fail_allocation&) = delete;

    /// True once the n-th allocation was made (and failed).
    bool fired() const noexcept;
    /// Allocations this context made since the guard was armed.
    std::size_t seen() const noexcept;
};

/// Runs `body(n)` with the n-th allocation of the calling context failing,
/// for n = 1, 2, ..., until a run makes fewer than n allocations. A
/// std::bad_alloc escaping `body` is caught (the body checks its own
/// invariants after the failure). Returns the number of allocation points
/// found, so a test can also assert that the path allocates at all.
template <class F>
std::size_t for_each_allocation_failure(F&& body) {
    for (std::size_t n = 1;; ++n) {
        bool fired = false;
        {
            fail_allocation guard{n};
            try {
                body(n);
            } catch (const std::bad_alloc&) {}
            fired = guard.fired();
        }
        if (!fired) return n - 1;
    }
}

}  // namespace troupe_test
