#pragma once
/// Cancellation: a `stop_source` requests a stop, every `stop_token` taken
/// from it sees it. A token is selectable (`on(token, ...)` in waituntil),
/// and blocking calls that take one fail with `cancelled` once a stop is
/// requested, changing nothing.
///
///     troupe::stop_source stop;
///     troupe::thread worker{[tok = stop.get_token(), &jobs] {
///         try {
///             for (;;) handle(jobs.remove(tok));   // throws cancelled on stop
///         } catch (const troupe::cancelled&) {}   // nothing was removed
///     }};
///     stop.request_stop();                        // wakes the worker
///
/// The meaning is std::stop_source / std::stop_token's (one shared state,
/// reference counted; a stop is requested once and never undone), with two
/// additions: a token is a select resource, and the calls that take one
/// (`channel::insert/remove`, `blocking_lock::lock`, `future::get`,
/// `thread::join`, `wait_group::wait`, `latch::wait`, `barrier::wait`)
/// resolve a stop racing their completion so that exactly one wins: either
/// the operation completed (the call returns normally, its effect done) or
/// it did not happen at all (the call throws `cancelled`; an element stays
/// where it was). A stop requested before the call makes it throw at once.
///
/// Cost: a token is one pointer (a reference count on copy). Waiting on a
/// token queues one node on its stop state (the one-word lock of the core
/// primitives, docs/locks.md); `stop_requested()` is one load.
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "troupe/select.hpp"

namespace troupe {

/// Thrown by a blocking call given a stop_token whose stop was requested
/// before the call's operation completed. The operation did not happen: no
/// element moved, no lock was taken, nothing was consumed.
class cancelled : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {
class stop_state;
/// Formats and throws `cancelled` for a blocking call (`what`: "channel
/// remove", ...) on the resource (`kind`, `name`, `address`).
[[noreturn]] void throw_cancelled(const char* what, const char* name, const void* address);
}  // namespace detail

class stop_source;

/// A view of a stop state: whether a stop was requested, and a select
/// resource that becomes available when it is. Copies share the state. A
/// default-constructed token has no state: it is never stopped, and
/// selecting it waits forever (like waiting on a nil channel in Go).
class stop_token {
public:
    stop_token() noexcept = default;
    stop_token(const stop_token& o) noexcept;
    stop_token(stop_token&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    stop_token& operator=(stop_token o) noexcept {
        std::swap(s_, o.s_);
        return *this;
    }
    ~stop_token();

    /// Whether a stop was requested (acquire: what the requester did before
    /// request_stop() is visible). Lock-free, nothrow.
    bool stop_requested() const noexcept;
    /// Whether a stop can still be requested (a source exists or existed and
    /// stopped). nothrow.
    bool stop_possible() const noexcept;

    /// Selectable: available once a stop is requested; the clause's
    /// operation takes nothing. nothrow.
    bool register_select(select_node& n) const noexcept;
    bool unregister_select(select_node& n) const noexcept;
    bool on_selected(select_node&) const noexcept { return true; }
    /// How a dump of a waituntil names the clause.
    const char* select_kind() const noexcept { return "stop_token"; }
    const void* select_resource() const noexcept { return s_; }
    /// Lock-free guess for waituntil's ready hints.
    bool select_ready_hint() const noexcept { return stop_requested(); }

    friend bool operator==(const stop_token& a, const stop_token& b) noexcept {
        return a.s_ == b.s_;
    }

private:
    friend class stop_source;
    explicit stop_token(detail::stop_state* s) noexcept : s_(s) {}
    detail::stop_state* s_ = nullptr;
};

/// Owns (a share of) a stop state and requests stops. Copies share the state.
class stop_source {
public:
    /// A new stop state. Throws std::bad_alloc.
    stop_source();
    /// A source with no state (std::nostopstate): it cannot request a stop.
    struct no_state_t {};
    explicit stop_source(no_state_t) noexcept {}
    stop_source(const stop_source& o) noexcept;
    stop_source(stop_source&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    stop_source& operator=(stop_source o) noexcept {
        std::swap(s_, o.s_);
        return *this;
    }
    ~stop_source();

    /// Requests a stop: every token sees stop_requested(), every waiter
    /// selecting a token is woken, every blocking call given a token that
    /// has not completed fails with `cancelled`. Returns true if this call
    /// made the request (false: already requested, or no state). Never
    /// blocks (takes the state's queue lock for a few instructions per
    /// waiter); nothrow.
    bool request_stop() noexcept;
    bool stop_requested() const noexcept;
    bool stop_possible() const noexcept { return s_ != nullptr; }
    /// A token on this source's state. nothrow.
    stop_token get_token() const noexcept;

private:
    detail::stop_state* s_ = nullptr;
};

static_assert(selectable<stop_token>);

}  // namespace troupe
