#pragma once
/// Request/reply: a message that carries a future for its answer, so any
/// thread (a user thread, main, another actor's helper thread) can wait for
/// an actor's reply.
///
///     struct get_total : troupe::request<long> {};
///     struct counter : troupe::actor {
///         long total = 0;
///         troupe::allocation receive(get_total& q) {
///             q.reply(total);                  // fulfils the requester's future
///             return troupe::Nodelete;
///         }
///     };
///     get_total q;
///     long t = troupe::ask(c, q).get();        // send, then park until replied
///
/// The reply: exactly one per round, the first of `reply`/`reply_exception`
/// (claimed atomically in the request; a second `reply` throws future_error,
/// a second `reply_exception` does nothing). It may come from the behaviour,
/// from another actor the request was forwarded to (`other | q` inside the
/// behaviour), or later from whoever the behaviour handed it to (call
/// `defer()` first). A request may be re-sent after `reset()`.
///
/// Reply duty and exceptions: while its behaviour runs, the receiving
/// actor's dispatcher owes the requester an answer. An exception escaping
/// the behaviour is delivered through the future (`get()` rethrows it) and
/// the actor keeps running (as if it returned `Nodelete`) — unless the
/// behaviour already replied, forwarded the request or called `defer()`:
/// the duty then went with the reply or the request, the dispatcher never
/// touches the request again, and the exception goes to the actor system's
/// behaviour-exception handler (see troupe/actor.hpp).
///
/// A request belongs to its requester: the executor never applies an
/// allocation action to it and never touches it after the behaviour
/// returns or after its reply, so the requester may destroy it as soon as
/// `get()` returns. It must stay alive until it has been replied to.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <new>
#include <utility>

#include "troupe/actor.hpp"
#include "troupe/error.hpp"
#include "troupe/future.hpp"
#include "troupe/request_error.hpp"

namespace troupe {

namespace detail {
/// The states of a request's round (request<R>::state_): open until the
/// first answer claims it; `expired` when the ask's deadline (or the
/// requester's destructor) claimed it first: the receiver still holds the
/// request, and its answer, whenever it comes, is dropped and counted.
enum class round : std::uint8_t { open, answered, expired };

/// Arms the deadline of an ask of `q` (sent to `a`, names for the error)
/// at `when`; `expire` claims the round and fails the future. Throws
/// std::bad_alloc (nothing armed). The record is q.deadline.
void arm_deadline(request_tag& q, actor& a, const dispatch_names& names,
                  std::chrono::steady_clock::time_point when,
                  bool (*expire)(request_tag&, std::exception_ptr) noexcept);
/// The ask's deadline had passed when asking: the error the request fails
/// with at once (nothing is sent). Counted as a timed-out ask. Never throws.
[[gnu::cold]] std::exception_ptr deadline_passed(request_tag& q, actor& a,
                                                 const dispatch_names& names) noexcept;
/// A late answer of an expired round (its reply duty already taken):
/// counts the drop and lets the requester's side free the request. The caller must
/// not touch the request afterwards. Never throws.
void late_answer(request_tag& q) noexcept;
/// The requester's side lets go of a request that had a deadline (reset or
/// destructor): disarms the timer, claims an open round (the request is
/// abandoned in flight) and waits (parks) until the receiver has answered
/// an expired round, then frees the record. Never throws.
void settle_deadline(request_tag& q, std::atomic<round>& state) noexcept;
/// An ask with a deadline whose send threw: disarms and frees the record
/// (nothing was sent; a deadline that fired meanwhile failed the future).
void disarm_deadline(request_tag& q, bool expired) noexcept;
struct deadline_access {
    template <class M>
    static constexpr auto expire_fn() noexcept {
        return &M::expire;
    }
};
}  // namespace detail

template <class R = void>
class request : public message, public detail::request_tag {
public:
    using message::message;
    /// Lets a layer still holding the request (troupe-remote's pending
    /// asks: request_tag::on_destroy) forget it before it goes. After an
    /// ask with a deadline that expired (or that is still in flight), waits
    /// until the receiver has let go of it (see ask with a deadline).
    ~request() {
        if (on_destroy) on_destroy(*this, on_destroy_arg);
        if (deadline) [[unlikely]]
            detail::settle_deadline(*this, state_);
        if (counted_ask) detail::end_ask(counted_ask);  // asked, never answered
    }

    /// Fulfils the future with `v` and wakes the requester. Throws
    /// future_error if the request was already replied to this round, or
    /// what R's constructor throws (strong guarantee: then nothing was
    /// replied and the reply duty is unchanged). Never blocks. After the
    /// ask's deadline passed, the reply is dropped (counted in the asked
    /// system's dump) and `v` is left to its owner.
    template <class U = R>
    requires(!std::is_void_v<R>) void reply(U&& v) {
        publish([&] { result_.fulfil(std::forward<U>(v)); });
    }
    /// Fulfils a `request<void>` (as above).
    void reply() requires std::is_void_v<R> {
        publish([&] { result_.fulfil(); });
    }
    /// Delivers an exception instead of a value, if nobody replied yet this
    /// round; returns whether it did. Nothrow.
    bool reply_exception(std::exception_ptr e) noexcept {
        // Invariant: the round leaves `open` exactly once, by the answer that
        // publishes or by the deadline; losing the exchange means someone
        // else answers.
        const detail::round was = claim(detail::round::answered);
        if (was != detail::round::open) {
            if (was == detail::round::expired) answer_late();
            return false;
        }
        detail::take_reply_duty(this);  // before publishing: the request may die then
        // Likewise the ask's count: taken now, dropped once published.
        detail::ask_counter* const counted = std::exchange(counted_ask, nullptr);
        bool published = true;
        try {
            result_.fulfil_exception(std::move(e));
        } catch (...) {
            published = false;  // fulfilled through result() directly: already answered
        }
        if (counted) detail::end_ask(counted);
        return published;
    }
    /// The running behaviour gives up its reply duty: it keeps the request
    /// (or hands it to another thread) to reply later. An exception escaping
    /// the behaviour afterwards goes to the actor system's handler instead of
    /// the requester. Call it before the request becomes reachable by the
    /// thread that will reply. Nothrow; does nothing outside its behaviour.
    void defer() noexcept { detail::take_reply_duty(this); }

    /// The requester's side: wait with get(), or use it in a waituntil.
    future<R>& result() noexcept { return result_; }
    /// Makes the request reusable (throws future_error if threads wait;
    /// strong). Call it only once the previous round was replied to. After
    /// an ask whose deadline expired, first waits (parks) until the receiver
    /// has let go of the request.
    void reset() {
        if (result_.waiters() != 0)
            throw future_error("troupe: request reset while threads wait for its reply");
        if (deadline) detail::settle_deadline(*this, state_);
        result_.reset();
        state_.store(detail::round::open, std::memory_order_relaxed);
    }

    /// Whether this round was answered by the ask's deadline (or abandoned
    /// by the requester) before any reply. Nothrow.
    bool expired() const noexcept {
        return state_.load(std::memory_order_acquire) == detail::round::expired;
    }

private:
    friend struct detail::deadline_access;

    // Drops the answer of an expired round. The duty is taken by the
    // address the dispatcher knows (this object, not its request_tag base).
    void answer_late() noexcept {
        detail::take_reply_duty(this);
        detail::late_answer(*this);
    }

    // Claims the round for `to`; returns the state it had (open: claimed).
    // acq_rel: orders the claimer after whatever a racing claimer did.
    detail::round claim(detail::round to) noexcept {
        detail::round s = detail::round::open;
        state_.compare_exchange_strong(s, to, std::memory_order_acq_rel, std::memory_order_acquire);
        return s;
    }

    // The deadline's claim (the timer service, or the requester's side): on
    // success fails the future with `e`.
    static bool expire(detail::request_tag& t, std::exception_ptr e) noexcept {
        auto& q = static_cast<request&>(t);
        if (q.claim(detail::round::expired) != detail::round::open) return false;
        try {
            q.result_.fulfil_exception(std::move(e));
        } catch (...) {
            // fulfilled through result() directly: nothing to wake
        }
        return true;
    }

    template <class Fulfil>
    void publish(Fulfil&& fulfil) {
        const detail::round was = claim(detail::round::answered);
        if (was == detail::round::expired) {
            answer_late();  // dropped: the requester had given up
            return;
        }
        if (was != detail::round::open)
            throw future_error("troupe: request replied to twice (it was already answered)");
        // Release the dispatcher's duty before publishing: once the future
        // is fulfilled the requester may free the request, and the
        // dispatcher must not then deliver an exception to it.
        const bool owed = detail::take_reply_duty(this);
        // The ask's count too (the request may die once published).
        detail::ask_counter* const counted = std::exchange(counted_ask, nullptr);
        try {
            fulfil();
        } catch (...) {
            // Nothing was published (the value's constructor threw, or the
            // future was fulfilled directly): undo the claim, the duty and
            // the count. A deadline that fired meanwhile found the round
            // answered and left it alone: the round then waits for a reply
            // as an ask without a deadline does.
            counted_ask = counted;
            state_.store(detail::round::open, std::memory_order_release);
            if (owed) detail::restore_reply_duty(this);
            throw;
        }
        if (counted) detail::end_ask(counted);
    }

    future<R> result_;
    std::atomic<detail::round> state_{detail::round::open};
};

/// Sends request `q` to `a` and returns its future. From a behaviour, the
/// request is handed to the mailbox at once (flush_sends), so the behaviour
/// may wait for the reply (holding its worker meanwhile; see actor_system).
/// Works from a user thread, an OS thread or a behaviour; `get()` parks the
/// caller. Strong guarantee: if it throws (std::bad_alloc from a growing
/// mailbox), the request was not sent. From a behaviour, a failure to hand
/// the staged request to its mailbox at once is not reported: it is sent
/// and goes out when the batch ends or the behaviour blocks. A behaviour asking its own mailbox's
/// actor, or any actor with one worker, deadlocks.
template <class A, class M>
requires std::derived_from<A, actor> && std::derived_from<M, detail::request_tag>
auto& ask(A& a, M& q) {
    // Counted (for dumps) before the send: the reply may come at once.
    detail::begin_ask(a, q);
    detail::note_ask(a, &q.result(), detail::names_of<A, M>, false);
    try {
        a | q;  // strong: if it throws, q was not sent
    } catch (...) {
        detail::end_ask(std::exchange(q.counted_ask, nullptr));
        throw;
    }
    try {
        flush_sends();
    } catch (const std::bad_alloc&) {
        // q is queued in the worker (sent): it reaches its mailbox when the
        // batch ends or the behaviour blocks. Not an error of this ask.
    }
    return q.result();
}

/// Sends request `q` to `a` as ask(a, q) does, with a deadline: if no
/// answer came by `deadline`, the future fails with troupe::request_error
/// (reason::timeout), naming the actor, the request and the deadline. The
/// round is answered exactly once: the reply and the deadline race on one
/// claim, so the value (or exception) reaches the requester only if the
/// reply won; a reply that loses is dropped (the replier's `reply` returns
/// normally), counted and shown in troupe::dump ("late replies dropped").
/// A deadline already passed fails the future at once and sends nothing.
///
/// After a timeout the receiver may still hold the request (queued, or in
/// its behaviour): `q` must not be freed or reset until it has let go, so
/// its destructor and reset() wait (park) until the receiver answered
/// (any answer: a reply, an exception, the dispatcher's "unanswered", or
/// the drop of a request to a finished actor). Freeing `q` before any
/// answer or timeout abandons the round the same way (the destructor
/// waits). A receiver that never answers (a deferred request forgotten)
/// therefore keeps the requester's destructor waiting. Prefer replying
/// from the behaviour.
///
/// The deadline uses core's timer service (one heap entry; no thread).
/// Throws std::bad_alloc (the record or the timer heap): nothing sent,
/// nothing armed. Otherwise as ask(a, q).
template <class A, class M>
requires std::derived_from<A, actor> && std::derived_from<M, detail::request_tag>
auto& ask(A& a, M& q, std::chrono::steady_clock::time_point deadline) {
    constexpr const detail::dispatch_names& names = detail::names_of<A, M>;
    if (deadline <= std::chrono::steady_clock::now()) {
#if defined(TROUPE_CHECKED)
        detail::send_access::mark_sent(q);  // answered, not forgotten: no "never sent" report
#endif
        q.reply_exception(detail::deadline_passed(q, a, names));
        return q.result();
    }
    // Counted before the timer is armed: its expiry counts in the same place.
    detail::begin_ask(a, q);
    detail::note_ask(a, &q.result(), names, true);
    try {
        detail::arm_deadline(q, a, names, deadline, detail::deadline_access::expire_fn<M>());
    } catch (...) {
        detail::end_ask(std::exchange(q.counted_ask, nullptr));
        throw;
    }
    try {
        a | q;  // strong: if it throws, q was not sent
    } catch (...) {
        detail::disarm_deadline(q, q.expired());
        if (q.counted_ask) detail::end_ask(std::exchange(q.counted_ask, nullptr));
        throw;
    }
    try {
        flush_sends();
    } catch (const std::bad_alloc&) {
        // queued in the worker (sent): as ask(a, q)
    }
    return q.result();
}

/// ask(a, q, now + timeout).
template <class A, class M, class Rep, class Period>
requires std::derived_from<A, actor> && std::derived_from<M, detail::request_tag>
auto& ask(A& a, M& q, std::chrono::duration<Rep, Period> timeout) {
    return ask(a, q,
               std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout));
}

}  // namespace troupe
