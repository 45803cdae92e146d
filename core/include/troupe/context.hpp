#pragma once
/// Execution contexts and the one park/unpark mechanism every blocking
/// operation in troupe is built on.
///
///     troupe::context& me = troupe::this_context();
///     publish(&me);          // make yourself findable by the waker
///     troupe::park();        // returns after exactly one unpark(me)
///
/// A context is either a troupe user thread or an OS thread (`main`, a
/// `std::thread`, an actor worker). A user thread parks by switching to its
/// processor's scheduler; an OS thread parks on a futex. The protocol is a
/// binary permit: an `unpark` that arrives before the matching `park` is
/// remembered, so the park returns at once and no wake is ever lost.
///
/// Discipline kept by every troupe primitive: each park is matched by exactly
/// one unpark. Waiters decide who wakes them by a CAS on their wait node, so a
/// second waker (a timer racing a signal) never unparks. Consequently park
/// never returns spuriously, and wait nodes on the waiter's stack stay valid
/// until the waker's unpark (the waker's last touch).
#include <atomic>
#include <cstdint>

#include "troupe/detail/wait_reason.hpp"

namespace troupe {

namespace detail {
class processor;
struct fiber;
struct context_access;
struct debug_layout_access;
}  // namespace detail

/// Something that can block: a user thread or an OS thread.
class context {
public:
    enum class kind : std::uint8_t { os_thread, user_thread };

    context(const context&) = delete;
    context& operator=(const context&) = delete;

    /// Which flavour of context this is.
    kind flavour() const noexcept { return kind_; }
    /// True for troupe user threads.
    bool is_user_thread() const noexcept { return kind_ == kind::user_thread; }

protected:
    constexpr explicit context(kind k) noexcept : kind_(k) {}
    ~context() = default;

private:
    friend void park() noexcept;
    friend void unpark(context&) noexcept;
    friend class detail::processor;
    friend struct detail::context_access;
    friend struct detail::debug_layout_access;

    // What this context waits on (troupe/detail/wait_reason.hpp), written
    // by itself on the slow path that parks; read by dumps and debuggers.
    detail::wait_reason wait_;
    // The registry's view (core/src/diag/registry.cpp): a process-unique id (0:
    // not registered), a user-set name, links of the registry's lists.
    std::uint64_t id_ = 0;
    std::atomic<const char*> name_{nullptr};
    context* reg_prev_ = nullptr;
    context* reg_next_ = nullptr;

    // Permit word. running: no permit; permit: an unpark is banked;
    // parked: the owner is (being) parked and needs a wake.
    enum : std::uint32_t { running = 0, permit = 1, parked = 2 };
    std::atomic<std::uint32_t> state_{running};
    kind kind_;
    // The fork-join worker this context runs as (troupe/parallel.hpp), or
    // nullptr; written and read only by the context itself.
    void* fork_join_ = nullptr;
};

/// The calling context (the current user thread, or this OS thread's record).
/// The reference stays valid for the life of that thread.
context& this_context() noexcept;

/// Blocks the calling context until it is unparked; returns at once if an
/// unpark is already banked. Never throws; never returns spuriously.
void park() noexcept;

/// How park() spins on an OS thread before it sleeps on the futex (a user
/// thread never spins in park: it switches to its processor's scheduler).
struct park_spin_policy {
    /// Most permit polls (pause instructions) before sleeping; 0: never spin.
    int max_spins = 1000;
    /// Adapt below max_spins to how long recent wakes took to come: spin
    /// about twice that, and only a short probe while spinning has not
    /// paid (so a thread blocked on a busy machine sleeps at once).
    bool adaptive = true;
};

/// Sets the process-wide OS-thread park spin policy (also taken from the
/// environment variable TROUPE_PARK_SPIN=<max_spins> at start-up). Threads
/// already parked keep the policy they read. nothrow.
void set_park_spin_policy(park_spin_policy p) noexcept;
/// The current OS-thread park spin policy. nothrow.
park_spin_policy get_park_spin_policy() noexcept;

/// Wakes `c` if it is parked, otherwise banks a permit for its next park.
/// `c` must stay alive for the call: a waiter that can leave on what the
/// caller published before it (and then end) needs the caller to announce
/// it first (detail/wake_guard.hpp, as troupe's own wakes do).
/// Safe from any context, including timer callbacks. Cost: one CAS, plus a
/// ready-queue push (user thread) or a futex wake (OS thread) if parked.
/// A user thread woken from a user thread of its own cluster runs next on
/// the waker's processor (an idle processor may steal it after a short
/// grace); otherwise it goes back to the processor it last ran on.
/// In checked builds a second unpark while one is banked is reported.
void unpark(context& c) noexcept;

}  // namespace troupe
