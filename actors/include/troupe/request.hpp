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
#include <exception>
#include <new>
#include <utility>

#include "troupe/actor.hpp"
#include "troupe/error.hpp"
#include "troupe/future.hpp"
#include "troupe/request_error.hpp"

namespace troupe {

template <class R = void>
class request : public message, public detail::request_tag {
public:
    using message::message;
    /// Lets a layer still holding the request (troupe-remote's pending
    /// asks: request_tag::on_destroy) forget it before it goes.
    ~request() {
        if (on_destroy) on_destroy(*this, on_destroy_arg);
        if (counted_ask) detail::end_ask(counted_ask);  // asked, never answered
    }

    /// Fulfils the future with `v` and wakes the requester. Throws
    /// future_error if the request was already replied to this round, or
    /// what R's constructor throws (strong guarantee: then nothing was
    /// replied and the reply duty is unchanged). Never blocks.
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
        // Invariant: replied_ is set exactly once per round, by the reply
        // that publishes; losing the exchange means someone else answers.
        if (replied_.exchange(true, std::memory_order_acq_rel)) return false;
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
    /// strong). Call it only once the previous round was replied to.
    void reset() {
        result_.reset();
        replied_.store(false, std::memory_order_relaxed);
    }

private:
    template <class Fulfil>
    void publish(Fulfil&& fulfil) {
        // Claim the round (acq_rel: orders us after a racing claimer).
        if (replied_.exchange(true, std::memory_order_acq_rel))
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
            // the count.
            counted_ask = counted;
            replied_.store(false, std::memory_order_release);
            if (owed) detail::restore_reply_duty(this);
            throw;
        }
        if (counted) detail::end_ask(counted);
    }

    future<R> result_;
    std::atomic<bool> replied_{false};
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

}  // namespace troupe
