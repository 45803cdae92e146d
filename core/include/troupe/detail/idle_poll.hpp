#pragma once
// Idle pollers: for runtimes built on core that wait on an event source core
// cannot sleep on (troupe-remote's MPI progress: Open MPI only polls, it has
// no arrival notification). Idle processors and idle actor workers call every
// registered poller on each pass of their idle spin, so a message that
// arrives while any troupe kernel thread has nothing to do is picked up by
// that thread at once, without waking another; and they tell the pollers
// once before they sleep, so a runtime can hand its polling duty to a
// thread of its own.
//
//     bool poll(void* self) noexcept;          // one non-blocking look
//     void sleeping(void* self) noexcept;      // this thread stops polling
//     troupe::detail::idle_poller p{&poll, &sleeping, this};
//     troupe::detail::add_idle_poller(p);      // idle threads start calling it
//     ...
//     troupe::detail::remove_idle_poller(p);   // no call runs or starts after this
//
// Process-wide, like the network it polls: every cluster's processors and
// every executor's workers call it. With no poller registered the idle paths
// pay one relaxed load of a global counter per pass (their spin is idle time
// anyway). docs/scheduler.md ("Idle pollers") describes the hook.
#include <atomic>
#include <cstddef>

namespace troupe::detail {

/// A poller: `poll` and `sleeping` run on the idle thread, on its own stack
/// (a processor's scheduler context or an actor worker between batches),
/// concurrently from several threads. Neither may throw; they should not
/// park (a park blocks the idle kernel thread itself) and must not call
/// remove_idle_poller.
struct idle_poller {
    /// One look; true if it found (and did) work: the caller then keeps
    /// spinning (its spin-down starts again) and looks for ready work at once.
    bool (*poll)(void* arg) noexcept = nullptr;
    /// Optional: the calling thread is about to sleep (it polls no more until
    /// something wakes it).
    void (*sleeping)(void* arg) noexcept = nullptr;
    void* arg = nullptr;
    /// Optional: whether something this poller serves is awaited right now
    /// (troupe-remote: an ask's reply). An OS thread spinning in park() keeps
    /// polling past its adaptive budget while a poller says so, for at most
    /// defaults::core::os_park_awaited_spin: the reply is then received by
    /// the waiter itself, not by a thread that must wake it through a futex.
    bool (*awaited)(void* arg) noexcept = nullptr;
};

/// At most this many pollers are registered at once.
inline constexpr std::size_t max_idle_pollers = 4;

/// Registers `p` (by value; it is identified by its three fields for
/// removal). Idle threads call it from now on. Throws std::length_error if
/// max_idle_pollers are registered, std::invalid_argument if `p.poll` is
/// null (nothing registered then). Never blocks beyond a short mutex.
void add_idle_poller(const idle_poller& p);
/// Unregisters the poller equal to `p` (no-op if none is) and waits until no
/// thread is inside one of its calls: after it returns, `p.arg` may be
/// destroyed. Spins (yielding the kernel thread) for the calls in progress.
/// Calling it from inside a poller is reported as misuse (it would wait for
/// itself). Nothrow.
void remove_idle_poller(const idle_poller& p) noexcept;

namespace idle_poll_impl {
// Registered pollers (relaxed: a hint; a registration that races an idle
// pass is seen on a later pass).
extern std::atomic<int> registered;
bool poll_all() noexcept;
void sleeping_all() noexcept;
bool awaited_any() noexcept;
}  // namespace idle_poll_impl

/// Called by idle processors and actor workers on each idle pass: runs every
/// registered poller; true if one found work. One relaxed load when none
/// is registered.
inline bool poll_idle() noexcept {
    return idle_poll_impl::registered.load(std::memory_order_relaxed) != 0 &&
           idle_poll_impl::poll_all();
}
/// Whether a registered poller says something it serves is awaited (see
/// idle_poller::awaited). One relaxed load when none is registered.
inline bool poll_awaited() noexcept {
    return idle_poll_impl::registered.load(std::memory_order_relaxed) != 0 &&
           idle_poll_impl::awaited_any();
}
/// Called by an idle processor or actor worker just before it sleeps: tells
/// every registered poller (its `sleeping`). One relaxed load when none is.
inline void idle_sleeping() noexcept {
    if (idle_poll_impl::registered.load(std::memory_order_relaxed) != 0)
        idle_poll_impl::sleeping_all();
}

}  // namespace troupe::detail
