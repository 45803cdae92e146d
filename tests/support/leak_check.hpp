#pragma once
// Per-test leak check (marl's tracked-allocator idea, adapted to a library
// that allocates through the global operator new): the test support library
// replaces the global allocation functions (alloc_fail.cpp) and counts the
// live heap blocks of the whole process. A leak_check guard records that
// count when it is created and, when it is destroyed, fails the running
// test if the count differs, so a test proves it returned every block it
// made, whichever thread made or freed it.
//
//     TEST_CASE("...") {
//         troupe_test::on_processors([](troupe::cluster& c) {
//             troupe_test::leak_check no_leaks;   // after the cluster exists
//             ...                                 // join everything it starts
//         });                                     // checked here, per count
//     }
//
// What the count ignores by construction, and why the check is exact anyway:
//  - Caches that outlive every test (the runtime's stack pool, the timer
//    service's thread and heap (started by arming a timer: a short sleep
//    may arm none), the default cluster and its processors,
//    doctest's per-thread INFO/CAPTURE stack) are warmed once per process
//    before the first guard records its baseline: they then keep their
//    blocks (a vector that grows reallocates: one block out, one in).
//  - Per-kernel-thread stack caches are fixed arrays (no heap); stacks are
//    mmap'd, not counted.
//  - doctest allocates nothing for a passing assertion; a guard whose test
//    already failed (a failed assertion or an exception in flight) reports
//    nothing, so a leak report is never a consequence of another failure.
//  - Memory from malloc directly (exceptions being thrown, hwloc, libc) is
//    not counted; LSan (the asan build) still checks it at exit.
// A guard must enclose no SUBCASE boundary, and everything that runs inside
// it must be joined or stopped before it is destroyed (a running thread may
// still own blocks). Works the same in release, ASan and TSan builds (the
// replaced operator new calls malloc, which the sanitizers intercept).
#include <cstddef>
#include <source_location>

namespace troupe_test {

/// Heap blocks the process holds now: successful operator new calls minus
/// operator delete calls on non-null pointers, over all threads. Exact once
/// every thread that allocated has been joined (or synchronised with).
long live_heap_blocks() noexcept;

/// Fails the running doctest case when it is destroyed if the process holds
/// a different number of heap blocks than when it was created.
class leak_check {
public:
    /// Warms the process-wide caches (first guard of the process only; this
    /// starts the default cluster and the timer service), then records the
    /// live block count. Blocks while the warm-up threads run. Throws what
    /// creating a thread throws, and fails the test (a doctest REQUIRE) if
    /// this executable's operator new is not the counting one (the support
    /// library must be linked whole); then no guard exists.
    explicit leak_check(std::source_location where = std::source_location::current());
    /// Checks (a doctest CHECK naming the guard's file and line) that the
    /// count is back to the baseline, unless the test failed meanwhile or
    /// an exception is unwinding through the guard. Never throws.
    ~leak_check();
    leak_check(const leak_check&) = delete;
    leak_check& operator=(const leak_check&) = delete;

    /// Whether a guard that ends off its baseline fails the test (strict,
    /// the default) or only reports it (a doctest MESSAGE):
    /// TROUPE_LEAK_CHECK=report in the environment, or this call with
    /// false, makes guards report-only (for investigating; with
    /// TROUPE_LEAK_TRACE=1 a guard also prints where each block it kept was
    /// made). Never blocks.
    static void set_strict(bool strict) noexcept;

    /// Blocks held now minus at construction: positive, blocks not returned;
    /// negative, blocks from before the guard freed inside it. Never blocks.
    long leaked() const noexcept;

private:
    long baseline_;
    unsigned long trace_from_;  // TROUPE_LEAK_TRACE=1: first allocation inside
    long failures_;
    int uncaught_;
    std::source_location where_;
};

/// Failed doctest assertions and test-case exceptions reported so far in
/// this process (counted by the support library's listener).
long failed_assertions() noexcept;

namespace detail {
// Called by the replaced allocation functions (alloc_fail.cpp) only.
void note_allocation() noexcept;
void note_release() noexcept;
}  // namespace detail

}  // namespace troupe_test
