#pragma once
/// Actors and the send operator.
///
///     struct int_msg : troupe::message { int i; explicit int_msg(int i) : i(i) {} };
///     struct printer : troupe::actor {
///         troupe::allocation receive(int_msg& m) {
///             std::printf("%d\n", m.i);
///             return troupe::Nodelete;          // keep receiving
///         }
///     };
///     troupe::actor_system sys;                 // start the executor first
///     printer p;
///     int_msg a{1}, b{2};
///     p | a | b | troupe::finished_msg;         // cascaded sends, FIFO
///     sys.stop();                               // waits for p to finish
///
/// Derive actors from `troupe::actor` and write one `receive` per message
/// type returning an `allocation` (a member `allocation receive(M&)`, or a
/// free `allocation receive(A&, M&)` found by argument-dependent lookup).
/// `a | m` is resolved at compile time on the static types of both
/// operands: overload resolution picks the receive (a derived message uses
/// its own receive if the actor has one, else its base's), and the choice
/// is stored in the envelope as a template-generated function pointer — no
/// virtual call, RTTI or dynamic_cast on the send or receive path. Sending a
/// message type the actor has no receive for does not compile.
///
/// An actor belongs to the actor system that was current when it was
/// created: the system whose behaviour created it, else the default system
/// (`start_actor_system`, or the first running `actor_system` object), or the
/// one passed to `actor(actor_system&)`. Its messages all go to one mailbox
/// (its ticket, assigned round-robin), so it receives them one at a time, in
/// FIFO order per sender, never on two workers at once.
///
/// Cost of a send from a behaviour: a 24-byte copy into the worker's staging
/// buffer (one lock per destination mailbox per batch); from other threads:
/// one spinlock acquisition. No allocation once the buffers have grown.
#include <atomic>
#include <concepts>
#include <cstdint>
#include <exception>
#include <source_location>
#include <type_traits>

#include "troupe/config.hpp"
#include "troupe/allocation.hpp"
#include "troupe/detail/copy_queue.hpp"
#include "troupe/detail/mailbox.hpp"
#include "troupe/detail/type_name.hpp"
#include "troupe/message.hpp"
#include "troupe/poison_pill.hpp"

namespace troupe {

class actor_system;
class actor;

namespace detail {
struct send_access;
struct worker_access;
void attach(actor& a, actor_system* sys, const std::source_location& where);
void detach(actor& a) noexcept;
#if defined(TROUPE_CHECKED)
bool check_send(actor& a, message& m, const dispatch_names& names) noexcept;
#endif
#if defined(TROUPE_STATISTICS)
void note_sent(actor& a) noexcept;
#endif
/// Marks request messages (troupe/request.hpp): an exception escaping their
/// receive is delivered to the requester's future.
struct request_tag {};
}  // namespace detail

class alignas(16) actor {
public:
    /// Joins the current actor system (see above). Checked builds report an
    /// actor created with no running system; release builds throw
    /// std::logic_error. (The source location names the derived type in
    /// reports; never pass it yourself.)
    actor(std::source_location where = std::source_location::current()) {
        detail::attach(*this, nullptr, where);
    }
    /// Joins the actor system `sys`.
    explicit actor(actor_system& sys, std::source_location where = std::source_location::current()) {
        detail::attach(*this, &sys, where);
    }
    actor(const actor&) = delete;
    actor& operator=(const actor&) = delete;

    /// Virtual, so `Delete` runs the most-derived destructor. Destroying an
    /// actor that has not finished removes it from its system's live count
    /// (checked builds report it: its queued messages would dangle).
    virtual ~actor() {
        if (life() == alive) detail::detach(*this);
    }

    /// Whether a behaviour of this actor returned something other than
    /// `Nodelete`. Read it from the actor's own behaviours, or after
    /// synchronising with them (e.g. after the system stopped).
    bool finished() const noexcept { return life() != alive; }

private:
    friend struct detail::send_access;
    friend struct detail::worker_access;
    friend void detail::attach(actor&, actor_system*, const std::source_location&);
    friend void detail::detach(actor&) noexcept;

    // The header word: the mailbox pointer (mailboxes are 64-aligned) with
    // the life state in bits 0-1 and the registry flag in bit 2. Read by
    // every sender (relaxed; set before the actor is published), written by
    // the worker ending or registering the actor. With the vtable pointer it
    // forms a read-mostly header that the padding keeps off the cache line
    // of the derived class's fields (written by the receiving worker), so
    // senders on other workers do not bounce that line.
    enum : std::uintptr_t { alive = 0, ended = 1, unattached = 2, life_bits = 3, registered_bit = 4 };
    static constexpr std::uintptr_t flag_bits = 7;

    std::uintptr_t life() const noexcept { return header_.load(std::memory_order_relaxed) & life_bits; }

    std::atomic<std::uintptr_t> header_{0};
    // Registry of live actors that have received a message (see
    // detail::mailbox), touched by the worker processing the mailbox.
    actor* reg_prev_ = nullptr;
    actor* reg_next_ = nullptr;
    unsigned char pad_[64 - 4 * sizeof(void*)];
};

// 16-aligned and 64 bytes: the line holding bytes [0, 16) of an actor ends
// at or before byte 64, where the derived fields start.
static_assert(sizeof(actor) == 64 && alignof(actor) == 16);

namespace detail {

template <class A, class M>
concept member_receiver = requires(A& a, M& m) {
    { a.receive(m) } -> std::same_as<allocation>;
};
template <class A, class M>
concept free_receiver = requires(A& a, M& m) {
    { receive(a, m) } -> std::same_as<allocation>;
};

/// Whether `A | M` compiles: A has a receive for M, or M is a poison pill.
template <class A, class M>
inline constexpr bool can_receive = member_receiver<A, M> || free_receiver<A, M> || is_poison_pill<M>;

/// Runs a message's allocation action after a receive.
inline void finish_message(message& m) {
    switch (m.get_allocation()) {
    case Delete: delete &m; break;
    case Destroy: m.~message(); break;
    case Nodelete:
    case Finished: break;
    }
}

/// The trampoline stored in an envelope for a send of an M to an A: runs
/// the receive, then the message's allocation action, and returns the
/// actor's. The worker does not touch the message afterwards.
template <class A, class M>
allocation dispatch(actor& a, message& m) {
    A& self = static_cast<A&>(a);
    M& msg = static_cast<M&>(m);
    if constexpr (std::is_base_of_v<request_tag, M>) {
        // A request belongs to its requester, who may destroy it as soon as
        // the reply is in: never touch it after the behaviour. An exception
        // escaping the behaviour goes to the requester's future.
        try {
            if constexpr (member_receiver<A, M>)
                return self.receive(msg);
            else
                return receive(self, msg);
        } catch (...) {
            msg.reply_exception(std::current_exception());
            return Nodelete;
        }
    } else {
        allocation how;
        if constexpr (member_receiver<A, M>)
            how = self.receive(msg);
        else if constexpr (free_receiver<A, M>)
            how = receive(self, msg);
        else
            how = poison_pill_result<M>();
        finish_message(msg);
        return how;
    }
}

template <class A, class M>
inline constexpr dispatch_names names_of{type_name<A>(), type_name<M>()};

struct send_access {
#if defined(TROUPE_CHECKED)
    static void mark_sent(message& m) noexcept { m.sent_.store(true, std::memory_order_relaxed); }
#endif
};

/// Queues (a, m, fn) for delivery. From a behaviour the envelope is staged
/// in the worker and handed to a's mailbox when the current batch ends (a
/// message to the running actor itself joins the batch); from anywhere else
/// it goes straight to the mailbox under its lock, waking its worker if
/// parked.
void send(actor& a, message& m, dispatch_fn fn, const dispatch_names& names);

}  // namespace detail

/// Sends `m` to `a` (asynchronously) and returns `a`, so sends cascade:
/// `a | m1 | m2` sends m1, then m2. `m` must outlive its receive; the
/// executor applies its allocation action after the receive.
template <class A, class M>
    requires std::derived_from<A, actor> && std::derived_from<M, message>
A& operator|(A& a, M& m) {
    static_assert(!std::is_const_v<M>,
                  "troupe: messages are sent by non-const reference (the executor applies their "
                  "allocation action after the receive); do not send a const message");
    static_assert(detail::can_receive<A, M>,
                  "troupe: this actor type has no `allocation receive(M&)` for this message type "
                  "(see the 'with A = ...; M = ...' line of this error for the two types)");
    detail::send(a, m, &detail::dispatch<A, M>, detail::names_of<A, M>);
    return a;
}

/// Hands the sends made so far by the calling behaviour to their mailboxes.
/// (A behaviour's sends are otherwise delivered when its worker's current
/// batch ends.) Call it before a behaviour blocks on something another
/// actor provides; `ask` calls it. Does nothing outside behaviours.
void flush_sends();

/// Sending a temporary is rejected: the message would be gone before the
/// actor receives it.
template <class A, class M>
    requires std::derived_from<A, actor> && std::derived_from<std::remove_cvref_t<M>, message> &&
             (!std::is_lvalue_reference_v<M>)
A& operator|(A& a, M&&) {
    static_assert(sizeof(M) == 0,
                  "troupe: a message is sent by reference and must outlive its receive; send a "
                  "named message (or one from new with set_allocation(Delete)), not a temporary");
    return a;
}

}  // namespace troupe
