#pragma once
/// Actors and the send operator.
/// (Over 450 lines: most are the API's doc comments and the dispatch
/// templates every send inlines, which belong with the class they serve.)
///
///     struct int_msg : troupe::message { int i; explicit int_msg(int i) : i(i) {} };
///     struct printer : troupe::actor {
///         void receive(int_msg& m) { std::printf("%d\n", m.i); }   // keeps receiving
///     };
///     troupe::actor_system sys;                 // start the executor first
///     printer p;
///     int_msg a{1}, b{2};
///     p | a | b | troupe::finished_msg;         // cascaded sends, FIFO
///     sys.stop();                               // waits for p to finish
///
/// Derive actors from `troupe::actor` and write one `receive` per message
/// type (a member `receive(M&)`, or a free `receive(A&, M&)` found by
/// argument-dependent lookup). A receive returning `void` keeps the actor
/// receiving (as `Nodelete` does) and leaves the message's allocation as
/// set; one returning an `allocation` says what happens to the actor.
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
/// (its ticket, assigned at creation: a mailbox of the creating worker when
/// a behaviour creates it, else as `actor_system_config::placement` says), so it
/// receives them one at a time, in FIFO order per sender, never on two
/// workers at once. A message that a behaviour sends to an actor created
/// during the same batch of its worker runs before the rest of that batch
/// (depth first: a tree of actors built by behaviours holds one path of
/// itself, not a whole level); docs/actors.md, "Depth-first order", says
/// exactly when.
///
/// Cost of a send from a behaviour: a 24-byte copy into the worker's staging
/// buffer (one lock per destination mailbox per batch); from other threads:
/// one spinlock acquisition. No allocation once the buffers have grown.
///
/// Value sends: `troupe::send<M>(a, args...)` constructs an M on the heap,
/// marks it `Delete` and sends it: the runtime owns it and frees it after
/// the receive (no `*new` and `set_allocation` by hand). The block comes
/// from the sending worker's kept blocks of that size when it has one
/// (freed value-sent messages; detail::value_block_take), else from
/// `::operator new`, and is always exactly `sizeof(M)` bytes from it, so a
/// behaviour that takes a value-sent message over may `delete` it. Prefer it for a
/// message built in a loop body: one sent by reference must outlive its
/// receive (checked builds report one destroyed while still queued).
///
/// A send to an actor that has finished is dropped in every build, when it
/// is sent or when its turn comes: the message's allocation action runs as
/// after a receive, a request's future fails with troupe::request_error;
/// checked builds also report it (misuse_kind::lost_message).
///
/// Exceptions escaping a behaviour:
/// - from the receive of a request (troupe/request.hpp) that the behaviour
///   neither replied to, forwarded, nor deferred: delivered to the
///   requester's future; the actor keeps running (as if it returned
///   `Nodelete`);
/// - otherwise (an ordinary message, or a request already answered or
///   passed on): the actor system's behaviour-exception handler decides
///   (`actor_system_config::on_behaviour_exception`). The default one prints
///   the actor type, the message type, the exception type and its what() on
///   stderr and terminates the actor as if it returned `Finished` (its
///   storage is not freed: the runtime cannot know where it lives; later
///   messages to it are dropped, reported in checked builds). Either way the
///   message's allocation action runs as after a normal receive (requests
///   have none), the worker goes on with the next message, and `stop()` does
///   not wait for the terminated actor.
///
/// Exception guarantees of sends: `a | m` is strong (if it throws —
/// std::bad_alloc while a full mailbox or staging buffer grows — nothing was
/// queued; a message sent from a behaviour may still be waiting in the
/// worker's pipeline, never lost or duplicated). `send<M>` is strong (the
/// message is freed if the send throws).
#include <atomic>
#include <concepts>
#include <cstdint>
#include <exception>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>

#include "troupe/allocation.hpp"
#include "troupe/config.hpp"
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
struct ask_counter;   // executor.hpp
struct deadline_ask;  // request.hpp's deadline record (deadline.cpp)
struct publish_access;
struct life_access;
/// Tag of the constructor of actors that no system runs (see actor).
struct stand_in_t {
    explicit stand_in_t() = default;
};
/// The end of an actor for its monitors and links (monitor.cpp): called
/// once, after it was marked ended and before its storage may go. Nothrow.
void life_ended(actor& a, allocation how) noexcept;
/// Frees the monitor/link record of an actor being destroyed. Nothrow.
void life_free(actor& a) noexcept;
/// A poison pill ends the actor receiving it (the reason its monitors see).
void note_poison_pill() noexcept;
/// Set by a module that makes actors reachable from other processes
/// (troupe-remote, before it marks any actor): `~actor` calls it first, for
/// an actor so marked, so the module stops delivering to it before its
/// memory goes. Must not throw; may block briefly (it waits out a delivery
/// in progress).
inline void (*unpublish_hook)(actor&) noexcept = nullptr;
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
///
/// `on_destroy` is for a layer that writes a reply into the request later
/// from another thread (troupe-remote's pending asks): the request's
/// destructor calls it first (before its future goes), so that layer can
/// forget the request, or wait for a reply being written, before the memory
/// goes.
struct request_tag {
    using destroy_hook = void (*)(request_tag& q, std::uint64_t arg) noexcept;
    destroy_hook on_destroy = nullptr;
    std::uint64_t on_destroy_arg = 0;
    /// The asked system's count of asks outstanding (troupe::dump), while
    /// this request counts in it: set by ask() before the send, taken by the
    /// reply before it publishes (or by the destructor of a request never
    /// answered). Touched by the requester, then by the one replier, each
    /// after the other (the send and the reply order them).
    ask_counter* counted_ask = nullptr;
    /// The deadline of an ask with one (troupe::ask(a, q, deadline)): its
    /// timer and what a late answer signals. Owned by the requester's side
    /// (freed by reset() or the destructor).
    deadline_ask* deadline = nullptr;
    /// Takers writing a reply into this request now (troupe-remote's ask
    /// table: raised under its lock when a reply, a rank's end or a
    /// deadline takes the ask, lowered with a release as the write's last
    /// touch of the request). Per request, so the request's destructor
    /// waits for its own reply's write and no other. Accessed only through
    /// std::atomic_ref.
    std::uint32_t replies_writing = 0;
};

/// ask(): counts `q` in the asks outstanding of `a`'s system (nothing if
/// `a` has none). Nothrow.
void begin_ask(actor& a, request_tag& q) noexcept;
/// ask() from a behaviour: notes on the calling worker that the running
/// behaviour asked `a` (request types `names`) and that `reply` is the
/// future of the answer, so a dump and a stop report can follow the wait
/// on `reply` to `a` (request cycles). Forgotten when the next message is
/// delivered. Does nothing outside a behaviour. Nothrow.
void note_ask(actor& a, const void* reply, const dispatch_names& names, bool deadline) noexcept;
/// The ask counted in `c` was answered (or abandoned). Nothrow.
void end_ask(ask_counter* c) noexcept;

/// The exception a request fails with when its receive by the actor types
/// in `names` returned without answering it, or its receiver had finished
/// (troupe::request_error). Cold; never throws.
[[gnu::cold]] std::exception_ptr request_unanswered(const dispatch_names& names) noexcept;
[[gnu::cold]] std::exception_ptr request_receiver_ended(const dispatch_names& names) noexcept;

/// The reply duty of the request whose receive runs on this thread: set by
/// the dispatcher, cleared (on this thread) by the first reply, forward or
/// defer of that request. While it is set, the dispatcher delivers an
/// escaping exception to the requester; once it is cleared the dispatcher
/// never touches the request again (the requester may have freed it).
/// Lives on the dispatcher's stack; one per thread at a time (behaviours
/// do not nest on a worker).
class request_scope {
public:
    explicit request_scope(const void* request) noexcept;
    ~request_scope();
    request_scope(const request_scope&) = delete;
    request_scope& operator=(const request_scope&) = delete;
    /// Whether the dispatcher still owes the requester an answer.
    bool owes_reply() const noexcept { return owes_; }
    /// Takes the duty (the dispatcher is about to answer).
    void take() noexcept { owes_ = false; }

private:
    friend bool take_reply_duty(const void* request) noexcept;
    friend void restore_reply_duty(const void* request) noexcept;
    const void* request_;
    bool owes_ = true;
    request_scope* outer_;
};
/// Called by a reply, forward or defer of `request`: if this thread's
/// dispatcher owed its reply, clears that duty and returns true. Compares
/// addresses only (never dereferences `request`).
bool take_reply_duty(const void* request) noexcept;
/// Undoes take_reply_duty (a reply that threw before publishing anything).
void restore_reply_duty(const void* request) noexcept;

/// The exception being handled escaped a behaviour of `a` for a message of
/// the types in `names` and no requester takes it: calls the actor system's
/// behaviour-exception handler (or the default one) and returns what
/// happens to the actor. Never throws (a throwing handler terminates).
[[gnu::cold]] allocation behaviour_threw(actor& a, const dispatch_names& names) noexcept;
}  // namespace detail

class alignas(16) actor {
public:
    /// Joins the current actor system (see above). Checked builds report an
    /// actor created with no running system; release builds throw
    /// std::logic_error (strong: nothing was registered). Never blocks or
    /// allocates otherwise. (The source location names the derived type in
    /// reports; never pass it yourself.)
    actor(std::source_location where = std::source_location::current()) {
        detail::attach(*this, nullptr, where);
    }
    /// Joins the actor system `sys`.
    explicit actor(actor_system& sys,
                   std::source_location where = std::source_location::current()) {
        detail::attach(*this, &sys, where);
    }
    /// For runtime stand-ins that no system runs and that never receive a
    /// message (troupe-remote's stand-ins for actors on other ranks, which
    /// local monitors watch): joins no system, counts nowhere, reads as
    /// finished; sends to it are refused. Nothrow.
    explicit actor(detail::stand_in_t) noexcept {
        header_.store(unattached, std::memory_order_relaxed);
    }
    actor(const actor&) = delete;
    actor& operator=(const actor&) = delete;

    /// Virtual, so `Delete` runs the most-derived destructor. Destroying an
    /// actor that has not finished removes it from its system's live count
    /// (checked builds report it: its queued messages would dangle).
    virtual ~actor() {
        if (published_) [[unlikely]]
            detail::unpublish_hook(*this);
        if (life() == alive) detail::detach(*this);
        if (life_.load(std::memory_order_relaxed) > life_tomb_max) [[unlikely]]
            detail::life_free(*this);
    }

    /// Whether a behaviour of this actor returned something other than
    /// `Nodelete`. Read it from the actor's own behaviours, or after
    /// synchronising with them (e.g. after the system stopped).
    bool finished() const noexcept { return life() != alive; }

    /// Names the actor in reports: troupe::dump's worker lines, request
    /// cycles, stop reports ("actor 'ponger' (pong_actor)"). `name` is not
    /// copied: pass a string literal or one that outlives the actor system
    /// (a report may name an actor it has seen in a behaviour until the
    /// system stops). nullptr removes the name. Nothrow; any thread.
    void set_name(const char* name) noexcept { name_.store(name, std::memory_order_relaxed); }
    /// The name set by set_name, or nullptr. Nothrow.
    const char* name() const noexcept { return name_.load(std::memory_order_relaxed); }

private:
    friend struct detail::send_access;
    friend struct detail::worker_access;
    friend struct detail::publish_access;
    friend struct detail::life_access;
    friend void detail::attach(actor&, actor_system*, const std::source_location&);
    friend void detail::detach(actor&) noexcept;

    // The header word: the mailbox pointer (mailboxes are 64-aligned) with
    // the life state in bits 0-1 and the registry flag in bit 2. Read by
    // every sender (relaxed; set before the actor is published), written by
    // the worker ending or registering the actor. With the vtable pointer it
    // forms a read-mostly header that the padding keeps off the cache line
    // of the derived class's fields (written by the receiving worker), so
    // senders on other workers do not bounce that line.
    enum : std::uintptr_t {
        alive = 0,
        ended = 1,
        unattached = 2,
        life_bits = 3,
        registered_bit = 4
    };
    static constexpr std::uintptr_t flag_bits = 7;

    std::uintptr_t life() const noexcept {
        return header_.load(std::memory_order_relaxed) & life_bits;
    }

    std::atomic<std::uintptr_t> header_{0};
    // Depth-first order (docs/actors.md, "Depth-first order"): the stamp of
    // the batch that created this actor while its worker unfolds new actors
    // depth first, 0 otherwise (or once that order is over for it). Written
    // by that worker only; read (relaxed) by the sends of behaviours.
    std::atomic<std::uint64_t> born_{0};
    // Registry of live actors that have received a message (see
    // detail::mailbox), touched by the worker processing the mailbox.
    actor* reg_prev_ = nullptr;
    actor* reg_next_ = nullptr;
    // Monitors and links (troupe/monitor.hpp): 0 while nobody watched or
    // linked it; its record once someone did; an odd tombstone (the reason
    // kind, shifted) once it ended unwatched. Changed by compare-and-swap
    // only (monitor.cpp), so the end and a new monitor agree on who fires.
    static constexpr std::uintptr_t life_tomb_max = 255;
    std::atomic<std::uintptr_t> life_{0};
    // set_name's string (reports only).
    std::atomic<const char*> name_{nullptr};
    // Marked by detail::publish_access (troupe-remote's publish) before the
    // actor is reachable from other processes; read by ~actor.
    bool published_ = false;
    // While born_ holds its worker's stamp: how many of its messages wait
    // on that worker's depth-first stack, and the delivery whose sends
    // queued the latest of them (touched only by that worker).
    std::uint16_t stacked_ = 0;
    std::uint32_t stacked_group_ = 0;
};

// 16-aligned and 64 bytes: the line holding bytes [0, 16) of an actor ends
// at or before byte 64, where the derived fields start.
static_assert(sizeof(actor) == 64 && alignof(actor) == 16);

namespace detail {

/// Marks an actor published (see unpublish_hook): only after the hook is set.
struct publish_access {
    static void mark(actor& a) noexcept { a.published_ = true; }
};

/// What a receive may return: an allocation, or nothing (`Nodelete`).
template <class R>
concept receive_result = std::same_as<R, allocation> || std::is_void_v<R>;

template <class A, class M>
concept member_receiver = requires(A& a, M& m) {
    { a.receive(m) } -> receive_result;
};
template <class A, class M>
concept free_receiver = requires(A& a, M& m) {
    { receive(a, m) } -> receive_result;
};

/// Whether `A | M` compiles: A has a receive for M, or M is a poison pill.
template <class A, class M>
inline constexpr bool can_receive =
    member_receiver<A, M> || free_receiver<A, M> || is_poison_pill<M>;

/// Value sends' blocks (troupe::send<M>): a worker keeps the blocks that
/// value-sent messages it delivered leave, by size, and its behaviours'
/// value sends take them again, so a pipeline of value sends runs without
/// malloc (Savina's radixsort spent 30% of its time in glibc's malloc and
/// free). Blocks of more than `value_block_max` bytes, over-aligned types
/// and types with their own operator new or delete go through new and delete as
/// before; so does everything under AddressSanitizer (its use-after-free
/// checks see every message).
inline constexpr std::size_t value_block_max = 256;
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool value_blocks_pooled = false;
#else
inline constexpr bool value_blocks_pooled = true;
#endif
/// A block of exactly `bytes` (a multiple of 8, at most value_block_max)
/// bytes: from the calling worker's free list, else (in a system of two or
/// more workers) a chain of them from the system's depot, else ::operator
/// new. Throws what ::operator new throws.
void* value_block_take(std::size_t bytes);
/// Gives back a block of exactly `bytes` bytes from value_block_take (or
/// ::operator new(bytes)): to the calling worker's free list while it
/// holds fewer than its bound, else towards the system's depot (two or
/// more workers), else ::operator delete. Never throws.
void value_block_give(void* p, std::size_t bytes) noexcept;

template <class M>
inline constexpr bool value_block_fits = value_blocks_pooled && sizeof(M) <= value_block_max &&
                                         sizeof(M) % 8 == 0 &&
                                         alignof(M) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__ &&
                                         !requires {
    M::operator new(sizeof(M));
}
&&!requires { M::operator delete(static_cast<void*>(nullptr)); }
&&!requires { M::operator delete(static_cast<void*>(nullptr), sizeof(M)); };

/// `Delete`'s action for a value send's message: destroys it and gives
/// its block back (value_block_give). Out of line, so that every
/// dispatch, most of which never frees, keeps its short frame (inline, it
/// cost the static send path 4 instructions a message: send_cost).
void delete_value_message(message& m);

struct value_block_access {
    static void mark(message& m, std::size_t bytes) noexcept {
        m.value_block_words_ = static_cast<std::uint8_t>(bytes / 8);
    }
    static std::size_t bytes(const message& m) noexcept {
        return std::size_t{m.value_block_words_} * 8;
    }
};

/// Runs a message's allocation action after a receive.
inline void finish_message(message& m) {
    switch (m.get_allocation()) {
    case Delete:
        if (value_block_access::bytes(m) != 0) delete_value_message(m);
        else delete &m;
        break;
    case Destroy: m.~message(); break;
    case Nodelete:
    case Finished: break;
    }
}

template <class A, class M>
inline constexpr dispatch_names names_of{type_name<A>(), type_name<M>()};
/// The names of runtime-made sends whose drop is expected (timers, downs,
/// exit signals).
template <class A, class M>
inline constexpr dispatch_names quiet_names_of{type_name<A>(), type_name<M>(), true};

/// The type names of a trampoline (the function stored in an envelope),
/// for reports on what a worker runs now: each `dispatch<A, M>`
/// instantiated in the program adds its entry to a process-wide list when
/// the program (or library) is loaded; nothing on the send or delivery path.
struct trampoline_entry {
    trampoline_entry(dispatch_fn f, const dispatch_names& n) noexcept;
    dispatch_fn fn;
    const dispatch_names* names;
    const trampoline_entry* next = nullptr;
};
/// The names of trampoline `fn`, or nullptr (a runtime-made message).
/// Nothrow.
const dispatch_names* trampoline_names(dispatch_fn fn) noexcept;
template <class A, class M>
struct trampoline_registration {
    static trampoline_entry entry;
};

/// Runs the receive of an M by an A chosen at compile time (a receive
/// returning void means `Nodelete`).
template <class A, class M>
allocation run_receive(A& self, M& msg) {
    if constexpr (member_receiver<A, M>) {
        if constexpr (std::is_void_v<decltype(self.receive(msg))>) {
            self.receive(msg);
            return Nodelete;
        } else {
            return self.receive(msg);
        }
    } else if constexpr (free_receiver<A, M>) {
        if constexpr (std::is_void_v<decltype(receive(self, msg))>) {
            receive(self, msg);
            return Nodelete;
        } else {
            return receive(self, msg);
        }
    } else {
        note_poison_pill();
        return poison_pill_result<M>();
    }
}

/// Drops a message whose receiver has finished: a request fails (its
/// requester's future gets a request_error), any other message gets its
/// allocation action as after a receive. Never throws.
template <class A, class M>
void drop(M& msg) noexcept {
    if constexpr (std::is_base_of_v<request_tag, M>)
        msg.reply_exception(request_receiver_ended(names_of<A, M>));
    else finish_message(msg);
}

/// The reply duty of a request's receive, in one place (local dispatch
/// below and troupe-remote's request_dispatch): runs the receive of `msg`
/// by `self`. While the dispatcher still owes the requester an answer, an
/// escaping exception, or a return without reply, forward or defer, is
/// handed to `fail` (as a std::exception_ptr), which answers the request.
/// Once the duty was taken inside the receive, the request belongs to
/// whoever took it (the requester may already have freed it): it is never
/// touched again, and an exception goes to the actor system's
/// behaviour-exception handler.
template <class A, class M, class Fail>
[[gnu::always_inline]] inline allocation receive_request(A& self, M& msg, Fail&& fail) {
    // The scope records a reply, forward or defer on this thread, without
    // touching the request.
    request_scope scope{&msg};
    allocation how;
    try {
        how = run_receive<A, M>(self, msg);
    } catch (...) {
        if (scope.owes_reply()) {
            // Nobody answered or took the request: it is alive (its
            // requester waits) and its reply is ours to give.
            scope.take();
            fail(std::current_exception());
            return Nodelete;
        }
        return behaviour_threw(self, names_of<A, M>);
    }
    if (scope.owes_reply()) [[unlikely]] {
        // Returned without replying, forwarding or deferring: nobody else
        // can answer, so the requester would wait forever.
        scope.take();
        fail(request_unanswered(names_of<A, M>));
    }
    return how;
}

/// The trampoline stored in an envelope for a send of an M to an A: runs
/// the receive, then the message's allocation action, and returns the
/// actor's. The worker does not touch the message afterwards. An escaping
/// exception never leaves it (see "Exceptions escaping a behaviour"). A
/// null `a` means the receiver has finished: the message is dropped.
template <class A, class M>
allocation dispatch(actor* a, message& m) {
    (void)&trampoline_registration<A, M>::entry;  // instantiates the entry: no code here
    M& msg = static_cast<M&>(m);
    if (!a) [[unlikely]] {
        drop<A, M>(msg);
        return Nodelete;
    }
    A& self = static_cast<A&>(*a);
    if constexpr (std::is_base_of_v<request_tag, M>) {
        // A request belongs to its requester, who may destroy it as soon as
        // the reply is in: never touched after the behaviour.
        return receive_request<A, M>(
            self, msg, [&msg](std::exception_ptr e) { msg.reply_exception(std::move(e)); });
    } else {
        allocation how;
        try {
            how = run_receive<A, M>(self, msg);
        } catch (...) {
            how = behaviour_threw(*a, names_of<A, M>);
        }
        finish_message(msg);
        return how;
    }
}

template <class A, class M>
trampoline_entry trampoline_registration<A, M>::entry{&dispatch<A, M>, names_of<A, M>};

struct send_access {
#if defined(TROUPE_CHECKED)
    static void mark_sent(message& m) noexcept { m.sent_.store(true, std::memory_order_relaxed); }
    /// An accepted send: one more delivery pending (see message::queued_).
    static void note_queued(message& m, const dispatch_names& names) noexcept {
        m.sent_.store(true, std::memory_order_relaxed);
        m.queued_for_.store(&names, std::memory_order_relaxed);
        m.queued_.fetch_add(1, std::memory_order_relaxed);
    }
    /// A send that threw after note_queued (std::bad_alloc): not pending.
    static void note_unqueued(message& m) noexcept {
        m.queued_.fetch_sub(1, std::memory_order_relaxed);
    }
#endif
};

/// Queues (a, m, fn) for delivery. From a behaviour the envelope is staged
/// in the worker and handed to a's mailbox when the current batch ends (a
/// message to the running actor itself joins the batch); from anywhere else
/// it goes straight to the mailbox under its lock, waking its worker if
/// parked. Returns false if the send was refused: `a` has finished (every
/// build; checked builds report it) or was created with no running system
/// (checked builds); `m` was then dropped (`fn` ran with no actor: its
/// allocation action ran, or a request failed). Strong guarantee
/// (std::bad_alloc from a growing buffer: nothing queued or dropped).
bool send(actor& a, message& m, dispatch_fn fn, const dispatch_names& names);
/// As send, but never staged in the calling thread's worker: straight to
/// a's mailbox under its lock, even from a behaviour. For deliveries on
/// behalf of another sender (troupe-remote's progress pass, which may run
/// in a waiting behaviour's park spin): a staged envelope would be
/// overtaken by that sender's later messages delivered by other threads.
bool send_external(actor& a, message& m, dispatch_fn fn, const dispatch_names& names);

/// Sends m to a, or drops it (see send); returns whether it was queued.
template <class A, class M>
bool send_or_drop(A& a, M& m) {
    return send(a, m, &dispatch<A, M>, names_of<A, M>);
}

}  // namespace detail

/// Sends `m` to `a` (asynchronously) and returns `a`, so sends cascade:
/// `a | m1 | m2` sends m1, then m2. `m` must outlive its receive; the
/// executor applies its allocation action after the receive (or when the
/// send is dropped because `a` has finished).
template <class A, class M>
requires std::derived_from<A, actor> && std::derived_from<M, message> A& operator|(A& a, M& m) {
    static_assert(!std::is_const_v<M>,
                  "troupe: messages are sent by non-const reference (the executor applies their "
                  "allocation action after the receive); do not send a const message");
    static_assert(detail::can_receive<A, M>,
                  "troupe: this actor type has no `receive(M&)` for this message type "
                  "(see the 'with A = ...; M = ...' line of this error for the two types)");
    [[maybe_unused]] const bool queued = detail::send_or_drop(a, m);
    if constexpr (std::is_base_of_v<detail::request_tag, M>) {
        // Forwarding the request being received passes its reply duty on
        // with it (address comparison only: the receiver may already have
        // replied and the requester freed it). A refused send (a finished
        // actor) already answered it with a request_error.
        if (queued) detail::take_reply_duty(&m);
    }
    return a;
}

/// Value send: constructs `M{args...}` on the heap, marks it `Delete` and
/// sends it to `a`; the runtime frees it after the receive (unless the
/// behaviour changes its allocation, which makes it the behaviour's).
/// Statically typed like `a | m`. Returns `a`, so `send<M>(a, ...) | m2`
/// cascades. Throws what M's constructor or `new` throws, or std::bad_alloc
/// from the send (strong: nothing is sent and the message is freed). A send
/// to a finished actor is dropped and frees the message.
template <class M, class A, class... Args>
requires std::derived_from<A, actor> && std::derived_from<M, message> &&
    std::constructible_from<M, Args&&...>
        A& send(A& a, Args&&... args) {
    static_assert(!std::is_base_of_v<detail::request_tag, M>,
                  "troupe: a request belongs to its requester (it carries the reply future); "
                  "use troupe::ask with a request you own");
    static_assert(detail::can_receive<A, M>,
                  "troupe: this actor type has no `receive(M&)` for this message type "
                  "(see the 'with A = ...; M = ...' line of this error for the two types)");
    if constexpr (detail::value_block_fits<M>) {
        void* block = detail::value_block_take(sizeof(M));
        M* m;
        try {
            m = ::new (block) M(std::forward<Args>(args)...);
        } catch (...) {
            detail::value_block_give(block, sizeof(M));
            throw;
        }
        m->set_allocation(Delete);
        detail::value_block_access::mark(*m, sizeof(M));
        try {
            detail::send_or_drop(a, *m);
        } catch (...) {
            // Nothing was queued: the message is still ours.
            m->~M();
            detail::value_block_give(block, sizeof(M));
            throw;
        }
    } else {
        std::unique_ptr<M> owned{new M(std::forward<Args>(args)...)};
        owned->set_allocation(Delete);
        // Queued: the executor frees it after the receive; dropped (a
        // finished actor): its Delete action already freed it. Either way
        // not ours now.
        detail::send_or_drop(a, *owned);
        (void)owned.release();
    }
    return a;
}

/// Hands the sends made so far by the calling behaviour to their mailboxes.
/// (A behaviour's sends are otherwise delivered when its worker's current
/// batch ends.) Call it before a behaviour blocks on something another
/// actor provides; `ask` calls it. Does nothing outside behaviours. Never
/// blocks (one mailbox lock per destination). Throws std::bad_alloc if a
/// mailbox cannot grow (basic guarantee: whatever was not handed over stays
/// staged, in order, and goes out when the batch ends; nothing is lost or
/// duplicated).
void flush_sends();

/// Sending a temporary is rejected: the message would be gone before the
/// actor receives it.
template <class A, class M>
requires std::derived_from<A, actor> && std::derived_from<std::remove_cvref_t<M>, message> &&
    (!std::is_lvalue_reference_v<M>)A&
    operator|(A& a, M&&) {
    static_assert(sizeof(M) == 0,
                  "troupe: a message is sent by reference and must outlive its receive; send a "
                  "named message (or one from new with set_allocation(Delete)), not a temporary");
    return a;
}

}  // namespace troupe
