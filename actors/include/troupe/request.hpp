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
/// If the behaviour throws, the exception is delivered through the future
/// (`get()` rethrows it) and the actor keeps running (as if it returned
/// `Nodelete`). A request may be re-sent after `reset()`. The reply may also
/// come later from another actor the request was forwarded to.
///
/// A request belongs to its requester: the executor never applies an
/// allocation action to it and never touches it after the behaviour
/// returns, so the requester may destroy it as soon as `get()` returns.
#include <exception>
#include <utility>

#include "troupe/actor.hpp"
#include "troupe/future.hpp"

namespace troupe {

template <class R = void>
class request : public message, public detail::request_tag {
public:
    using message::message;

    /// Fulfils the future with `v` (throws future_error if already replied).
    template <class U = R>
        requires(!std::is_void_v<R>)
    void reply(U&& v) {
        result_.fulfil(std::forward<U>(v));
    }
    /// Fulfils a `request<void>`.
    void reply()
        requires std::is_void_v<R>
    {
        result_.fulfil();
    }
    /// Delivers an exception instead of a value (if not replied yet).
    void reply_exception(std::exception_ptr e) {
        if (!result_.available()) result_.fulfil_exception(std::move(e));
    }

    /// The requester's side: wait with get(), or use it in a waituntil.
    future<R>& result() noexcept { return result_; }
    /// Makes the request reusable (throws future_error if threads wait).
    void reset() { result_.reset(); }

private:
    future<R> result_;
};

/// Sends request `q` to `a` and returns its future. From a behaviour, the
/// request is handed to the mailbox at once (flush_sends), so the behaviour
/// may wait for the reply (holding its worker meanwhile; see actor_system).
template <class A, class M>
    requires std::derived_from<A, actor> && std::derived_from<M, detail::request_tag>
auto& ask(A& a, M& q) {
    a | q;
    flush_sends();
    return q.result();
}

}  // namespace troupe
