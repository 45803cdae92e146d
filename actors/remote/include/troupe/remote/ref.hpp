#pragma once
/// A typed reference to an actor on another rank (or this one), and remote
/// sends and asks.
///
///     auto bank = world.lookup<account>(1, "alice");   // remote_ref<account>
///     deposit d;  d.cents = 500;
///     bank | d;                                        // like a local send
///     bank.send(deposit{...});                         // value form
///     balance q;
///     long cents = bank.ask(q).get();                  // request/reply
///
/// Sends are typed on the static types, exactly like local ones: sending a
/// message the actor type has no `receive` for does not compile. The message
/// type must be registered (TROUPE_REMOTE_MESSAGE). A remote send encodes
/// the message at once (so it may be reused or destroyed right after `|`
/// returns; its allocation action is not applied: it stays the sender's),
/// and either posts the bytes to MPI from the calling thread (MPI_Isend,
/// when nothing waits in the outbox for that rank) or queues them for the
/// rank's progress engine: it never blocks on the network. Messages from one sender thread or actor
/// to one remote actor arrive in send order (per-pair FIFO).
///
/// `ask(q)` returns q's own future, so it works exactly like a local
/// request's: `get()` from any context, or a clause in `waituntil` with a
/// timeout. If the remote behaviour throws, get() throws remote_exception
/// naming the rank, the exception's type and its what(); if the actor is
/// gone (destroyed or finished), get() throws actor_gone; if the rank has
/// ended (its world was destroyed), get() throws rank_lost naming it, at
/// once when that is known and when its goodbye arrives otherwise. Inside a
/// behaviour, `ref.ask(q)` forwards the request being received (as `h | q`
/// does locally): the remote reply answers it. An ask may be
/// given up (a waituntil that chose its timeout): destroying the request
/// before its reply makes the engine forget it, and the late reply is
/// dropped quietly.
///
/// The program on the receiving rank must contain the same `ref | msg` (or
/// ask) for that pair of types (true of SPMD programs, where every rank runs
/// one binary); an MPMD receiver calls troupe::remote::accept<A, M...>().
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "troupe/actor.hpp"
#include "troupe/remote/detail/engine_api.hpp"
#include "troupe/remote/errors.hpp"
#include "troupe/remote/message.hpp"
#include "troupe/request.hpp"

namespace troupe::remote {

template <class A>
class remote_ref;

namespace detail {

/// Storage of a message received from the network: pooled per size.
template <class M>
struct inbound final : M {
    static void* operator new(std::size_t) { return pool<sizeof(inbound)>().take(); }
    static void operator delete(void* p) noexcept { pool<sizeof(inbound)>().give(p); }
};

template <class M>
inline constexpr bool poolable =
    !std::is_final_v<M> && alignof(M) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__;

template <class M>
void mark_sent([[maybe_unused]] M& m) noexcept {
#if defined(TROUPE_CHECKED)
    troupe::detail::send_access::mark_sent(m);
#endif
}

/// A request received from another rank: the message plus its reply route.
template <class A, class M>
allocation request_dispatch(troupe::actor* target, troupe::message& m);
struct captured_error;

template <class M>
struct inbound_request final : M, pending_reply {
    inbound_request(engine& e, int from, std::uint64_t token)
        : M(), pending_reply(e, from, token) {}
    troupe::detail::future_base& reply_future() noexcept override { return this->result(); }
    void encode_value(byte_writer& w) override {
        if (failed_) throw captured_error(error_type_, error_what_);
        if constexpr (std::is_void_v<reply_type<M>>)
            this->result().get();  // rethrows the behaviour's exception
        else put(w, this->result().get());
    }
    void recycle() noexcept override { delete this; }
    std::string_view message_name() const noexcept override { return message_traits<M>::name; }
    // Set on the worker thread, in the behaviour's catch, before the future
    // is fulfilled (the engine reads them after; it never touches the
    // exception object, whose reference count TSan cannot see).
    bool failed_ = false;
    std::string error_type_, error_what_;
    static void* operator new(std::size_t) { return pool<sizeof(inbound_request)>().take(); }
    static void operator delete(void* p) noexcept { pool<sizeof(inbound_request)>().give(p); }
};

/// The dynamic type name and what() of the exception being handled.
void describe_current_exception(std::string& type, std::string& what);
/// Rethrown by encode_value for a captured behaviour exception.
struct captured_error {
    std::string type, what;
};

template <class M>
void decode_all(M& m, byte_reader& r) {
    codec<M>::decode(m, r);
    if (r.left() != 0)
        throw truncated_payload("payload has " + std::to_string(r.left()) +
                                " byte(s) more than its type reads");
}

/// Names request_dispatch<A, M> for reports on what a worker runs (as
/// troupe::detail::dispatch's own entry does for local deliveries).
template <class A, class M>
struct request_trampoline {
    static troupe::detail::trampoline_entry entry;
};
template <class A, class M>
troupe::detail::trampoline_entry request_trampoline<A, M>::entry{&request_dispatch<A, M>,
                                                                 troupe::detail::names_of<A, M>};

/// The trampoline of a request received from another rank: the reply duty
/// of troupe::detail::dispatch (receive_request, one implementation for
/// both), answering through `fail_with`, which records the exception's type
/// and what() on the worker thread for the asking rank. Once the behaviour
/// replied, forwarded the request or called defer(), the engine may already
/// have shipped the reply and recycled the object (a later request of the
/// same type is built at the same address): it is never touched again. A
/// null `target` (the actor had finished) drops the request: it fails with
/// a troupe::request_error.
template <class A, class M>
allocation request_dispatch(troupe::actor* target, troupe::message& m) {
    (void)&request_trampoline<A, M>::entry;  // instantiates the entry: no code here
    M& msg = static_cast<M&>(m);
    // Fails the request with `e`, recording its type and what() for the
    // asking rank. Only while the reply is still ours to give.
    auto fail_with = [&msg](std::exception_ptr e) {
        auto& q = static_cast<inbound_request<M>&>(msg);
        try {
            std::rethrow_exception(e);
        } catch (...) {
            describe_current_exception(q.error_type_, q.error_what_);
        }
        q.failed_ = true;
        q.reply_exception(std::move(e));
    };
    if (!target) [[unlikely]] {
        fail_with(troupe::detail::request_receiver_ended(troupe::detail::names_of<A, M>));
        return Nodelete;
    }
    return troupe::detail::receive_request<A, M>(static_cast<A&>(*target), msg, fail_with);
}

/// Runs on the receiving rank's engine thread: builds the message from the
/// payload and sends it to the actor through the executor's external path.
template <class A, class M>
void deliver(const delivery& d, troupe::actor& target, byte_reader& payload) {
    A& a = static_cast<A&>(target);
    if constexpr (is_request<M>) {
        static_assert(
            std::is_default_constructible_v<M>,
            "troupe::remote: a request received from another rank is default-constructed, then "
            "decoded; give it a default constructor");
        static_assert(poolable<M>,
                      "troupe::remote: remote requests must not be final or over-aligned");
        auto* q = new inbound_request<M>(*d.eng, d.from, d.token);
        try {
            decode_all(static_cast<M&>(*q), payload);
        } catch (...) {
            mark_sent(static_cast<M&>(*q));
            q->recycle();
            throw;
        }
        watch(*d.eng, *q);
        // A finished target fails the ask (send drops it through
        // request_dispatch with no actor). Never staged in the calling
        // thread's worker (this pass may run in a waiting behaviour's park
        // spin): later frames from the same sender, delivered by other
        // threads, must not overtake it (per-pair FIFO).
        try {
            troupe::detail::send_external(a, static_cast<M&>(*q), &request_dispatch<A, M>,
                                          troupe::detail::names_of<A, M>);
        } catch (...) {
            // Not queued (std::bad_alloc growing the mailbox): the request
            // is watched, so answer it with the error; the engine ships
            // that reply (the asker's get() throws remote_exception naming
            // std::bad_alloc) and stops counting it as owed.
            mark_sent(static_cast<M&>(*q));  // handed to a send (checked builds)
            describe_current_exception(q->error_type_, q->error_what_);
            q->failed_ = true;
            q->reply_exception(std::current_exception());
        }
    } else {
        static_assert(
            std::is_default_constructible_v<M>,
            "troupe::remote: a message received from another rank is default-constructed, then "
            "decoded; give it a default constructor");
        M* m;
        if constexpr (poolable<M>) m = new inbound<M>();
        else m = new M();
        try {
            decode_all(*m, payload);
        } catch (...) {
            mark_sent(*m);
            delete m;
            throw;
        }
        m->set_allocation(Delete);  // back to the pool after the receive
        // Straight to the mailbox, as for requests above (per-pair FIFO).
        troupe::detail::send_external(a, *m, &troupe::detail::dispatch<A, M>,
                                      troupe::detail::names_of<A, M>);
    }
}

/// Instantiating this (by a remote send of M to A anywhere in the program)
/// registers deliver<A, M> under the two type names at startup.
template <class A, class M>
struct pair_entry {
    static inline const bool registered =
        register_pair(troupe::detail::type_name<A>(), message_traits<M>::name, &deliver<A, M>);
};

/// On the asker's rank: fulfils request M from its reply frame. Throws
/// truncated_payload for a payload that does not decode (an unknown error
/// code included), future_error if M was answered already.
template <class M>
void complete_reply(M& q, frame_kind k, byte_reader& r, int from) {
    using R = reply_type<M>;
    if (k == frame_kind::reply_value) {
        if constexpr (std::is_void_v<R>) {
            if (r.left() != 0) throw truncated_payload("void reply carries a payload");
            q.reply();
        } else {
            static_assert(std::is_default_constructible_v<R>,
                          "troupe::remote: a remote reply type must be default-constructible");
            R v{};
            get(r, v);
            if (r.left() != 0) throw truncated_payload("reply payload longer than its type");
            q.reply(std::move(v));
        }
        return;
    }
    reply_error_record e = get_reply_error(r);
    const std::string name{message_traits<M>::name};
    switch (e.code) {
    case error_code::behaviour_threw:
        q.reply_exception(
            std::make_exception_ptr(remote_exception(from, std::move(e.type), std::move(e.what))));
        return;
    case error_code::actor_gone:
        q.reply_exception(std::make_exception_ptr(
            actor_gone(from, std::move(e.actor_name), std::move(e.actor_type), name, e.what)));
        return;
    case error_code::network_error:
        q.reply_exception(std::make_exception_ptr(network_error(from, name, e.what)));
        return;
    case error_code::rank_ended:
        // Made on this rank when `from` said goodbye (never sent by a
        // rank: a behaviour's own rank_lost arrives as remote_exception).
        q.reply_exception(
            std::make_exception_ptr(rank_lost(from, rank_lost::reason::ended, e.what)));
        return;
    case error_code::timed_out:
        // Made on this rank when the ask's deadline passed (never sent).
        q.reply_exception(std::make_exception_ptr(
            troupe::request_error(troupe::request_error::reason::timeout, e.what)));
        return;
    }
}

/// Thrown by complete() when the request was already answered on the
/// asking rank (the engine reports it as the asker's misuse).
struct already_answered {};

/// On the asker's rank: fulfils request M from its reply frame. A reply
/// that does not decode fails the request with network_error (and is
/// reported by the engine).
template <class M>
void complete(troupe::detail::request_tag& tag, frame_kind k, byte_reader& r, int from) {
    M& q = static_cast<M&>(tag);
    try {
        complete_reply(q, k, r, from);
    } catch (const troupe::future_error&) {
        // Answered on this rank already (replied to and also asked on):
        // the asker's misuse, not bad input; the first answer stands.
        throw already_answered{};
    } catch (const truncated_payload& e) {
        q.reply_exception(std::make_exception_ptr(network_error(
            from, std::string{message_traits<M>::name},
            "troupe::remote: the reply to \"" + std::string{message_traits<M>::name} +
                "\" from rank " + std::to_string(from) + " is malformed: " + e.what())));
        throw;
    }
}

template <class A, class M>
constexpr void check_send() {
    static_assert(std::is_base_of_v<troupe::message, M>,
                  "troupe::remote: only troupe::message types can be sent");
    static_assert(troupe::detail::can_receive<A, M>,
                  "troupe: this actor type has no `receive(M&)` for this message type "
                  "(see the 'with A = ...; M = ...' line of this error for the two types)");
    static_assert(registered_message<M>,
                  "troupe::remote: this message type is not registered for remote sends; add "
                  "TROUPE_REMOTE_MESSAGE(type, \"stable.name\", &type::member...) at global scope");
}

template <class A>
engine& engine_of(const remote_ref<A>& r);

}  // namespace detail

/// A copyable, typed handle to an actor published on some rank.
template <class A>
class remote_ref {
public:
    /// An invalid reference (sending through it throws std::logic_error).
    remote_ref() noexcept = default;

    /// The rank the actor lives on.
    int rank() const noexcept { return rank_; }
    /// The actor's id on that rank.
    std::uint64_t id() const noexcept { return id_; }
    /// Whether this refers to an actor (it came from a lookup).
    bool valid() const noexcept { return eng_ != nullptr; }

    /// Value-send form: encodes `m` now and queues it for the actor. Never
    /// blocks on the network. Throws std::bad_alloc, what the message's
    /// encoder throws, std::logic_error for an invalid reference, or
    /// rank_lost if the actor's rank has ended; strong guarantee (nothing is
    /// queued if it throws).
    template <class M>
    const remote_ref& send(const M& m) const {
        detail::check_send<A, M>();
        tell(m);
        return *this;
    }

    /// Sends request `q` and returns its future (q.result()): get() parks
    /// until the remote behaviour replies, or throws remote_exception if it
    /// threw, actor_gone if the actor was destroyed or had finished, rank_lost if its rank ended
    /// (an ask that reached the mailbox after the actor's end fails with a remote_exception
    /// carrying the serving rank's request_error instead). Inside q's own behaviour this forwards
    /// q (the reply duty goes with it). Usable in waituntil. `q` must
    /// not be reset until the reply has arrived; it may be destroyed before (the ask is then given
    /// up: its reply is dropped quietly). Throws like send (strong guarantee).
    template <class M>
    requires std::is_base_of_v<troupe::detail::request_tag, M>
    auto& ask(M& q) const {
        return ask_with(q, [&](detail::engine& e) {
            const detail::ask_target t{rank_, id_, troupe::detail::type_name<A>(),
                                       message_traits<M>::name, &q.result()};
            return detail::register_ask(e, q, &detail::complete<M>, t);
        });
    }

    /// As ask(q), with a deadline: if no answer came by `deadline`, the
    /// future fails with troupe::request_error (reason::timeout) naming the
    /// request, the actor's type, id and rank, and the deadline; the ask is
    /// then given up (a reply arriving later is dropped, and counted in
    /// troupe::dump's "remote asks timed out ... late replies dropped"), so
    /// `q` may be destroyed or reset at once, unlike a local ask with a
    /// deadline. The round is answered once: the reply and the deadline
    /// race on one claim (the asks table), so the value reaches the future
    /// only if the reply won. A deadline already passed fails the future at
    /// once and sends nothing. The deadline is one entry in core's timer
    /// service (no thread). Throws like ask(q) (strong guarantee), and
    /// std::bad_alloc (nothing sent, nothing armed).
    template <class M>
    requires std::is_base_of_v<troupe::detail::request_tag, M>
    auto& ask(M& q, std::chrono::steady_clock::time_point deadline) const {
        const detail::ask_target t{rank_, id_, troupe::detail::type_name<A>(),
                                   message_traits<M>::name, &q.result()};
        if (deadline <= std::chrono::steady_clock::now()) {
            detail::check_send<A, M>();
            detail::mark_sent(q);       // answered, not forgotten
            auto& result = q.result();  // before the answer may let q be freed
            q.reply_exception(detail::ask_deadline_passed(engine(), t));
            return result;
        }
        return ask_with(q, [&](detail::engine& e) {
            return detail::register_ask(e, q, &detail::complete<M>, t, deadline);
        });
    }
    /// ask(q, now + timeout).
    template <class M, class Rep, class Period>
    requires std::is_base_of_v<troupe::detail::request_tag, M>
    auto& ask(M& q, std::chrono::duration<Rep, Period> timeout) const {
        return ask(q, std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout));
    }

    friend bool operator==(const remote_ref& a, const remote_ref& b) noexcept {
        return a.eng_ == b.eng_ && a.rank_ == b.rank_ && a.id_ == b.id_;
    }

    /// For the library: a reference to actor `id` on `rank`.
    remote_ref(detail::engine& e, int rank, std::uint64_t id) noexcept
        : eng_(&e), rank_(rank), id_(id) {}

    /// For the library: the engine (throws std::logic_error if invalid).
    detail::engine& engine() const {
        if (!eng_)
            throw std::logic_error(
                "troupe::remote: send through an invalid remote_ref (not from a lookup)");
        return *eng_;
    }

private:
    // ask(q) and ask(q, deadline): `reg` records the ask (and arms its
    // deadline) and returns its id.
    template <class M, class Register>
    auto& ask_with(M& q, Register&& reg) const {
        detail::check_send<A, M>();
        (void)detail::pair_entry<A, M>::registered;
        detail::mark_sent(q);  // see tell()
        detail::engine& e = engine();
        // Taken while `q` is surely alive: once the frame is shipped, the
        // reply may come and, for a forwarded request, its requester may
        // free `q` before we return.
        auto& result = q.result();
        std::uint64_t id;
        try {
            id = reg(e);
        } catch (const rank_lost&) {
            // The rank has ended: the ask fails at once, through its future
            // (as one sent just before it ended does).
            q.reply_exception(std::current_exception());
            return result;
        }
        try {
            detail::frame_buffer fb;  // the call's own: the encoder may park
            detail::byte_buffer& b = fb.get();
            detail::begin_frame(b, detail::frame_kind::ask, message_traits<M>::name,
                                detail::name_key(message_traits<M>::name), id_, id);
            byte_writer w{b};
            codec<M>::encode(q, w);
            detail::end_frame(b);
            detail::ship(e, rank_, b);
        } catch (const rank_lost&) {  // it ended just now: as above
            detail::cancel_ask(e, id);
            q.reply_exception(std::current_exception());
            return result;
        } catch (...) {
            detail::cancel_ask(e, id);
            throw;
        }
        // Forwarding the request being received (inside its behaviour)
        // passes its reply duty on with it, as `h | q` does locally: the
        // remote actor's reply answers it. Compares addresses only (the
        // reply may already have come and the requester freed `q`).
        troupe::detail::take_reply_duty(&q);
        return result;
    }

    template <class M>
    void tell(const M& m) const {
        (void)detail::pair_entry<A, M>::registered;
        // Handed to a send: it counts as sent even if the send throws (the
        // exception tells the caller; checked builds report only messages
        // never handed to any send).
        detail::mark_sent(const_cast<M&>(m));
        detail::engine& e = engine();
        detail::frame_buffer fb;  // the call's own: the encoder may park
        detail::byte_buffer& b = fb.get();
        detail::begin_frame(b, detail::frame_kind::tell, message_traits<M>::name,
                            detail::name_key(message_traits<M>::name), id_, 0);
        byte_writer w{b};
        codec<M>::encode(m, w);
        detail::end_frame(b);
        detail::ship(e, rank_, b);
    }
    template <class A2, class M>
    requires std::is_base_of_v<troupe::message, std::remove_cvref_t<M>>
    friend const remote_ref<A2>& operator|(const remote_ref<A2>& r, M&& m);

    detail::engine* eng_ = nullptr;
    int rank_ = -1;
    std::uint64_t id_ = 0;
};

/// Sends `m` to the remote actor (see remote_ref::send) and returns the
/// reference, so sends cascade: `ref | a | b`. The message is copied (encoded)
/// at once and stays the sender's: its allocation action is not applied
/// (a behaviour may forward the message it is receiving; a message from
/// `new` is the sender's to delete). Temporaries are fine. Throws like
/// send; strong guarantee.
template <class A, class M>
requires std::is_base_of_v<troupe::message, std::remove_cvref_t<M>>
const remote_ref<A>& operator|(const remote_ref<A>& r, M&& m) {
    using T = std::remove_cvref_t<M>;
    detail::check_send<A, T>();
    static_assert(
        !detail::is_request<T>,
        "troupe::remote: send requests with ref.ask(q), which returns the reply's future");
    r.tell(static_cast<const T&>(m));
    return r;
}

/// For programs whose ranks run different binaries (MPMD): makes this
/// binary able to deliver messages Ms... to actors of type A it publishes.
template <class A, class... Ms>
void accept() noexcept {
    (detail::check_send<A, Ms>(), ...);
    ((void)detail::pair_entry<A, Ms>::registered, ...);
}

}  // namespace troupe::remote
