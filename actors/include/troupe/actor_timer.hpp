#pragma once
/// Timers for actors: a message delivered later, at a time, or periodically.
///
///     struct tick : troupe::message {};
///     struct clock : troupe::actor {
///         troupe::timer_handle beat;
///         void receive(start&) { beat = troupe::send_every<tick>(*this, 100ms); }
///         void receive(tick&) { if (++n == 10) beat.cancel(); }
///     };
///     auto t = troupe::send_after<retry>(server, 50ms, attempt + 1);  // value form
///     t.cancel();
///
/// Each call returns a handle whose `cancel()` stops the delivery. Timers
/// work from behaviours and from any other thread. They share one heap
/// (one 16-byte entry each) and one service thread for the whole process,
/// started by the first timer (no thread per timer). A timer is sent to
/// its actor as an ordinary message when it fires, so it is received like
/// any other message, in the actor's mailbox order from then on.
///
/// Forms:
/// - value form `send_after<M>(a, delay, args...)`: the runtime builds the
///   M (with the timer in the same allocation) and frees it after its last
///   delivery or its cancellation;
/// - reference form `send_after(a, delay, m)`: `m` is the caller's; the
///   timer never applies its allocation action, and `m` must stay alive
///   until the timer is done (delivered, or cancelled while not running).
///
/// Periodic timers (`send_every`): the first delivery one period after the
/// call, then one period after the previous deadline; at most one tick is
/// in flight at a time, so an actor slower than its period is not flooded:
/// ticks missed meanwhile are skipped (the next deadline is one period from
/// now). A periodic timer runs until cancelled or its actor ends.
///
/// Cancellation, exactly: once `cancel()` returns, no delivery of this
/// timer starts. A delivery that had already started (a behaviour running
/// it on another worker, or the caller's own behaviour) runs to its end.
/// `cancel()` returns true if it prevented a delivery that would otherwise
/// have happened (a one-shot not yet delivered; a periodic timer's future
/// ticks), false if there was nothing left to stop (delivered, cancelled
/// before, its actor had ended). Cancelling twice, or from the timer's own
/// delivery, is allowed (the second call, or a one-shot's own delivery,
/// returns false).
///
/// A timer whose actor has finished is dropped when it fires, freed and
/// counted in the system's dump ("timer messages dropped"): not a misuse.
/// The actor's storage must still exist (a `Finished` actor, or one whose
/// timers were cancelled before it was freed): like any send, a timer to a
/// freed actor is undefined (checked builds report it). A timer whose
/// actor's system has stopped is dropped too.
///
/// Dropping a handle does not cancel its timer. Cost: one allocation (the
/// value form's message and timer together: 16 bytes plus the message,
/// 16 more for a periodic one), one heap insertion under the heap's lock.
/// Cancel is lazy: a compare-and-swap marks the timer dead and its entry
/// stays in the heap until it reaches the top or the cancel that makes
/// dead entries a quarter of the heap compacts it (O(heap) then, O(1)
/// amortized; it frees the dropped records, running their messages'
/// destructors, on the cancelling thread); until then the block is not
/// freed, and the dump counts it apart ("cancelled, not yet dropped"). A heap of at most 64 entries
/// is searched and the entry removed at once, and when every entry left is cancelled they are all
/// freed before the last cancel returns.
#include <chrono>
#include <concepts>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include "troupe/actor.hpp"

namespace troupe {

class timer_handle;

namespace detail {
struct timer_access;

// What the type-erased record operation does (timer_core::ops).
enum class timer_op : std::uint8_t { fire, free };

// The timer part of a timed message: 16 bytes (with a 24-byte message, a
// value-form one-shot is a 40-byte record, a 48-byte heap block). The
// deadline lives in the actor timer heap's entry (and, for a periodic
// timer, in periodic_part).
struct timer_core {
    union {
        actor* target = nullptr;
        // A cancelled record being dropped by a compaction of the heap
        // (timers.cpp): `target` is never read once the state is
        // `cancelled`, so its word may link the records to free.
        timer_core* next_dead;
    };
    // The record's operations (timer_ops<A, M, R>), by their number in
    // the process's table (timer_register_ops): fire and free.
    std::uint32_t ops = 0;
    std::atomic<std::uint16_t> state{0};  // timer_state
    // Holders: the handle (if kept) and the flight (armed, queued, running).
    std::atomic<std::uint16_t> refs{2};
};
struct periodic_part {
    std::chrono::steady_clock::duration period{};
    std::chrono::steady_clock::time_point deadline{};  // of the tick in flight
};
struct no_period {};

enum timer_state : std::uint16_t {
    timer_armed,    // in the actor timer heap (or in the service's batch firing it)
    timer_fired,    // its envelope is queued
    timer_running,  // its receive runs
    timer_running_cancelled,
    timer_cancelled,
    timer_done,
};

using timer_ops_fn = void (*)(timer_core&, timer_op) noexcept;
/// Gives `fn` its number in the process's table of record operations.
/// Throws std::length_error when the table (65,536 record types) is full.
std::uint32_t timer_register_ops(timer_ops_fn fn);

/// Releases one reference (the last frees the record). Nothrow.
void timer_release(timer_core& c) noexcept;
/// handle.cancel(); see actor_timer.hpp. Nothrow.
bool timer_cancel_actor(timer_core& c, bool periodic) noexcept;
/// Arms a new record (refs 2, state armed) for `when`. Throws
/// std::bad_alloc, or std::system_error if the timer thread cannot start
/// (the caller frees the record).
void timer_start(timer_core& c, std::chrono::steady_clock::time_point when);
/// The service callback's body: sends the envelope, or releases a
/// cancelled timer. Never throws.
void timer_fire(timer_core& c, message& m, dispatch_fn fn, const dispatch_names& names) noexcept;
/// A delivery starts (false: cancelled first; the flight was released).
bool timer_begin(timer_core& c) noexcept;
/// A delivery ended (`ended`: the actor did); re-arms a periodic timer.
void timer_end(timer_core& c, periodic_part* p, bool ended) noexcept;
/// The envelope was dropped (its actor had finished): counted, released.
void timer_dropped(timer_core& c, message& m) noexcept;
/// Actor timers in this process whose record is not freed yet: armed,
/// queued or running, and cancelled ones still in the heap (see
/// actor_timers_cancelled). Nothrow.
std::size_t actor_timers_pending() noexcept;
/// Of those, the cancelled ones the heap has not dropped yet (a snapshot).
std::size_t actor_timers_cancelled() noexcept;

// The record of the value form: the message and its timer in one block.
template <class M, bool Periodic>
struct timed_value final : M, timer_core, std::conditional_t<Periodic, periodic_part, no_period> {
    template <class... Args>
    explicit timed_value(Args&&... args) : M(std::forward<Args>(args)...) {}
    M& payload() noexcept { return *this; }
};
// The record of the reference form: a carrier message pointing at the
// caller's message.
template <class M, bool Periodic>
struct timed_ref final : message,
                         timer_core,
                         std::conditional_t<Periodic, periodic_part, no_period> {
    explicit timed_ref(M& m) noexcept : user(&m) {}
    M* user;
    M& payload() noexcept { return *user; }
};

template <class R>
periodic_part* period_of(R& r) noexcept {
    if constexpr (std::is_base_of_v<periodic_part, R>) return &r;
    else return nullptr;
}

template <class A, class M, class R>
allocation timer_dispatch(actor* a, message& m) {
    R& rec = static_cast<R&>(m);
    timer_core& c = rec;
    if (!a) [[unlikely]] {
        timer_dropped(c, m);
        return Nodelete;
    }
    if (!timer_begin(c)) return Nodelete;
    allocation how;
    try {
        how = run_receive<A, M>(static_cast<A&>(*a), rec.payload());
    } catch (...) {
        how = behaviour_threw(*a, names_of<A, M>);
    }
    timer_end(c, period_of(rec), how != Nodelete);
    return how;
}

template <class A, class M, class R>
void timer_ops(timer_core& c, timer_op op) noexcept {
    R& rec = static_cast<R&>(c);
    message& m = rec;
    if (op == timer_op::fire) timer_fire(c, m, &timer_dispatch<A, M, R>, quiet_names_of<A, M>);
    else delete &m;  // the message's virtual destructor frees the whole record
}

// The number of timer_ops<A, M, R>, registered on first use.
template <class A, class M, class R>
std::uint32_t timer_ops_id() {
    static const std::uint32_t id = timer_register_ops(&timer_ops<A, M, R>);
    return id;
}

template <class A, class M, class R>
R* timer_make(A& a, std::chrono::steady_clock::time_point when, std::unique_ptr<R> rec) {
    timer_core& c = *rec;
    c.target = &a;
    c.ops = timer_ops_id<A, M, R>();
    // Through the base: the user's M may have members of the same names.
    if constexpr (std::is_base_of_v<periodic_part, R>)
        static_cast<periodic_part&>(*rec).deadline = when;
#if defined(TROUPE_CHECKED)
    // Neither the carrier nor the caller's message goes through a send
    // before the timer fires (or ever, if cancelled): not "never sent".
    send_access::mark_sent(*rec);
    send_access::mark_sent(rec->payload());
#endif
    timer_start(c, when);  // throws: rec frees the record
    return rec.release();
}

template <class A, class M>
concept timer_message = std::derived_from<A, actor> && std::derived_from<M, message> &&
                        !std::is_base_of_v<request_tag, M> &&
                        can_receive<A, M>;

}  // namespace detail

/// Cancels a timer (see troupe/actor_timer.hpp). Move-only; destroying it
/// does not cancel.
class timer_handle {
public:
    timer_handle() noexcept = default;
    timer_handle(timer_handle&& o) noexcept
        : c_(std::exchange(o.c_, nullptr)), periodic_(o.periodic_) {}
    timer_handle& operator=(timer_handle&& o) noexcept {
        if (this != &o) {
            if (c_) detail::timer_release(*c_);
            c_ = std::exchange(o.c_, nullptr);
            periodic_ = o.periodic_;
        }
        return *this;
    }
    ~timer_handle() {
        if (c_) detail::timer_release(*c_);
    }

    /// Stops the timer: once this returns, no delivery of it starts. Returns
    /// whether it prevented a delivery (see the header). Nothrow; never
    /// blocks on anything but the timer heap's lock (taken for a small heap
    /// and by a compaction, see the header); allowed from the timer's own
    /// delivery and any number of times. False on an empty handle.
    bool cancel() noexcept { return c_ && detail::timer_cancel_actor(*c_, periodic_); }
    /// Whether the timer may still deliver (armed, queued or, periodic, not
    /// cancelled). A snapshot. Nothrow.
    bool pending() const noexcept {
        if (!c_) return false;
        const auto s = c_->state.load(std::memory_order_acquire);
        return s == detail::timer_armed || s == detail::timer_fired ||
               (periodic_ && s == detail::timer_running);
    }
    /// Whether the handle refers to a timer.
    explicit operator bool() const noexcept { return c_ != nullptr; }

private:
    friend struct detail::timer_access;
    timer_handle(detail::timer_core* c, bool periodic) noexcept : c_(c), periodic_(periodic) {}
    detail::timer_core* c_ = nullptr;
    bool periodic_ = false;
};

namespace detail {
struct timer_access {
    static timer_handle make(timer_core* c, bool periodic) noexcept { return {c, periodic}; }
};
}  // namespace detail

/// Sends `m` (the caller's; see "Forms") to `a` at `when`. Throws
/// std::bad_alloc, or std::system_error if the first timer cannot start
/// the timer thread (nothing armed).
template <class A, class M>
requires detail::timer_message<A, M> timer_handle
send_at(A& a, std::chrono::steady_clock::time_point when, M& m) {
    using R = detail::timed_ref<M, false>;
    return detail::timer_access::make(detail::timer_make<A, M>(a, when, std::make_unique<R>(m)),
                                      false);
}

/// Sends `m` (the caller's) to `a` after `delay`.
template <class A, class M>
requires detail::timer_message<A, M> timer_handle send_after(A& a, std::chrono::nanoseconds delay,
                                                             M& m) {
    return send_at(a, std::chrono::steady_clock::now() + delay, m);
}

/// Sends `m` (the caller's, never freed by the timer) to `a` every
/// `period` (first one period from now). Throws std::invalid_argument for
/// a period <= 0, std::bad_alloc or std::system_error (nothing armed).
template <class A, class M>
requires detail::timer_message<A, M> timer_handle send_every(A& a, std::chrono::nanoseconds period,
                                                             M& m);

/// Value form: builds `M{args...}` and sends it to `a` at `when`; the
/// runtime frees it after the delivery or the cancellation. Throws what
/// M's constructor throws, std::bad_alloc or std::system_error (nothing
/// armed).
template <class M, class A, class... Args>
requires detail::timer_message<A, M> && std::constructible_from<M, Args&&...> timer_handle
send_at(A& a, std::chrono::steady_clock::time_point when, Args&&... args) {
    using R = detail::timed_value<M, false>;
    return detail::timer_access::make(
        detail::timer_make<A, M>(a, when, std::make_unique<R>(std::forward<Args>(args)...)), false);
}

/// Value form of send_after.
template <class M, class A, class... Args>
requires detail::timer_message<A, M> && std::constructible_from<M, Args&&...> timer_handle
send_after(A& a, std::chrono::nanoseconds delay, Args&&... args) {
    return send_at<M>(a, std::chrono::steady_clock::now() + delay, std::forward<Args>(args)...);
}

namespace detail {
void check_period(std::chrono::nanoseconds period);
template <class A, class M, class R, class... Args>
timer_handle every(A& a, std::chrono::nanoseconds period, Args&&... args) {
    check_period(period);
    auto rec = std::make_unique<R>(std::forward<Args>(args)...);
    periodic_part& p = *rec;  // through the base: M may have a member `period`
    p.period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
    const auto first = std::chrono::steady_clock::now() + p.period;  // before rec moves
    return timer_access::make(timer_make<A, M>(a, first, std::move(rec)), true);
}
}  // namespace detail

template <class A, class M>
requires detail::timer_message<A, M> timer_handle send_every(A& a, std::chrono::nanoseconds period,
                                                             M& m) {
    return detail::every<A, M, detail::timed_ref<M, true>>(a, period, m);
}

/// Value form of send_every: one M, built once, delivered every period and
/// freed when the timer ends.
template <class M, class A, class... Args>
requires detail::timer_message<A, M> && std::constructible_from<M, Args&&...> timer_handle
send_every(A& a, std::chrono::nanoseconds period, Args&&... args) {
    return detail::every<A, M, detail::timed_value<M, true>>(a, period,
                                                             std::forward<Args>(args)...);
}

}  // namespace troupe
