#pragma once
// Internal: what the send/ask/deliver templates call in the library (the
// progress engine itself is in src/engine.hpp), and the pooled storage of
// messages received from the network.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/actor.hpp"
#include "troupe/future.hpp"
#include "troupe/remote/detail/wire.hpp"
#include "troupe/select.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::remote::detail {

class engine;

// ---------------------------------------------------------------- sending

/// The calling kernel thread's frame scratch buffer (reused: no allocation
/// once grown). Only for frames built without running user code (lookups,
/// the engine thread): a user thread that switches out while its frame is
/// in it lets another one on the same kernel thread overwrite it.
byte_buffer& scratch() noexcept;

/// A buffer from the calling kernel thread's spare list (empty if none is
/// left: it then allocates as it grows). Never blocks.
byte_buffer take_frame_buffer() noexcept;
/// Returns a buffer to the calling kernel thread's spare list (or frees it).
void give_frame_buffer(byte_buffer&& b) noexcept;

/// The buffer one send or ask builds its frame in, owned by the call. A
/// message's encoder is user code and may park (a codec or a cereal
/// `serialize` taking a troupe lock): the frame must survive another user
/// thread sending from the same kernel thread meanwhile, and the call may
/// resume on another kernel thread. Taken from and returned to a small
/// per-kernel-thread cache (out-of-line calls, so no thread-local address is
/// kept across a switch): no allocation once warm.
class frame_buffer {
public:
    frame_buffer() noexcept : b_(take_frame_buffer()) {}
    ~frame_buffer() { give_frame_buffer(std::move(b_)); }
    frame_buffer(const frame_buffer&) = delete;
    frame_buffer& operator=(const frame_buffer&) = delete;
    byte_buffer& get() noexcept { return b_; }

private:
    byte_buffer b_;
};
/// Starts a frame in `b` (cleared first): header and message name.
void begin_frame(byte_buffer& b, frame_kind k, std::string_view name, std::uint64_t key,
                 std::uint64_t target, std::uint64_t token);
/// Completes the frame started in `b`: sizes and padding. Throws
/// std::length_error (check_frame_size) for a frame over max_frame_size.
void end_frame(byte_buffer& b);
/// Throws std::length_error naming message `name`, the size and the limit
/// if a frame of `bytes` bytes exceeds max_frame_size.
void check_frame_size(std::size_t bytes, std::string_view name);
/// Posts the frame in `b` to `rank` with MPI_Isend from the calling thread
/// if nothing waits in that rank's outbox, else appends it to the outbox;
/// wakes the engine if it sleeps. Never blocks beyond a short spinlock,
/// taken without switching user threads (`b` may be the kernel thread's
/// scratch buffer: see lock_no_switch in outboxes.cpp). Throws
/// std::bad_alloc or std::length_error (the rank's unsent frames would
/// exceed max_frame_size; strong: nothing queued) or std::out_of_range
/// (bad rank).
void ship(engine& e, int rank, const byte_buffer& b);

/// Completes a request on the asker's rank from its reply frame: decodes
/// the value (or error) and fulfils the request's future.
using ask_complete_fn = void (*)(troupe::detail::request_tag& q, frame_kind k, byte_reader& r,
                                 int from);
/// Forgets an ask whose frame could not be shipped.
void cancel_ask(engine& e, std::uint64_t id) noexcept;

/// What names the asked actor and the request (in a remote ask's timeout,
/// and in a request cycle across ranks), and the future the reply
/// fulfils (compared with what a blocked behaviour waits on; not read).
struct ask_target {
    int rank;
    std::uint64_t id;
    std::string_view actor_type;
    std::string_view message;
    const void* reply = nullptr;
};
/// Records an ask of `t` awaiting its reply; returns its id (the frame's
/// token). Throws rank_lost (nothing registered) if `t.rank` has ended,
/// std::out_of_range (no such rank), std::bad_alloc.
std::uint64_t register_ask(engine& e, troupe::detail::request_tag& q, ask_complete_fn fn,
                           const ask_target& t);
/// As register_ask, with a deadline: at `when` a still unanswered ask
/// fails with troupe::request_error (reason::timeout) naming `t`, and its
/// reply, if it comes later, is dropped and counted. Throws rank_lost
/// (nothing registered), std::bad_alloc (nothing registered or armed).
std::uint64_t register_ask(engine& e, troupe::detail::request_tag& q, ask_complete_fn fn,
                           const ask_target& t, std::chrono::steady_clock::time_point when);
/// The error of an ask whose deadline had passed when it was made (nothing
/// is sent); counted as timed out. Never throws.
std::exception_ptr ask_deadline_passed(engine& e, const ask_target& t) noexcept;

// ---------------------------------------------------------------- monitors

/// The local stand-in of actor `id` on `rank`, on which monitors of that
/// actor are placed (troupe/remote/monitor.hpp); the first call for it
/// ships a watch frame to `rank`. A rank that has ended ends the stand-in
/// at once (rank_lost). Throws std::out_of_range (bad rank), std::bad_alloc
/// (no stand-in, or its watch frame not shipped: a later call retries).
troupe::actor& watch_remote(engine& e, int rank, std::uint64_t id);
/// That stand-in, or nullptr if this rank never monitored the actor.
troupe::actor* remote_stand_in(engine& e, int rank, std::uint64_t id) noexcept;

// ---------------------------------------------------------------- errors

/// The payload of a reply_error frame. `type` is the thrown exception's
/// dynamic type name (behaviour_threw only); `actor_name` and `actor_type`
/// name the gone actor (actor_gone only).
struct reply_error_record {
    error_code code = error_code::behaviour_threw;
    std::string type, what, actor_name, actor_type;
};
/// Appends `e` to `w` (code, then length-prefixed strings). Throws
/// std::bad_alloc (basic: `w` may hold part of the record).
void put_reply_error(byte_writer& w, const reply_error_record& e);
/// Reads an error record. Throws truncated_payload naming what is wrong: a
/// code this program does not know (its number and the known range), or
/// bytes missing or left over.
reply_error_record get_reply_error(byte_reader& r);

// ---------------------------------------------------------------- receiving

/// Context of one incoming tell/ask, for deliver<A, M>.
struct delivery {
    engine* eng;
    int from;             // the sending rank
    std::uint64_t token;  // ask id (asks only)
};
using deliver_fn = void (*)(const delivery& d, troupe::actor& target, byte_reader& payload);
/// Registers how a message named `msg_name` reaches an actor of the type
/// spelt `actor_type` (static initialisation). Returns true.
bool register_pair(std::string_view actor_type, std::string_view msg_name, deliver_fn fn) noexcept;

/// A request received from another rank, waiting for its behaviour's reply.
/// The engine watches its future with a general-mode select node (woken
/// through the engine's park counter) and ships the reply when it is
/// fulfilled, then recycles the object.
class pending_reply {
public:
    pending_reply(engine& e, int from, std::uint64_t token) noexcept;
    pending_reply(const pending_reply&) = delete;
    virtual ~pending_reply() = default;

    /// The request's future.
    virtual troupe::detail::future_base& reply_future() noexcept = 0;
    /// Encodes the fulfilled value; rethrows the behaviour's exception.
    virtual void encode_value(byte_writer& w) = 0;
    /// Frees the object (after the reply is shipped, or on a decode error).
    virtual void recycle() noexcept = 0;
    /// The request's registered message name (for error reports).
    virtual std::string_view message_name() const noexcept = 0;

    // Owned by the engine thread.
    std::atomic<std::uintptr_t> status{0};
    select_node node;
    const int from;
    const std::uint64_t token;
    pending_reply* next = nullptr;
};
/// Starts watching `p` (engine thread, before the request is delivered).
void watch(engine& e, pending_reply& p);

// ---------------------------------------------------------------- naming

struct lookup_answer {
    bool found = false;
    bool gone = false;  // published under that name, and destroyed since
    std::string lost;   // non-empty: the rank has ended (the error's text)
    std::uint64_t id = 0;
    std::string type;                    // the published actor's type
    std::vector<std::string> published;  // the names published there (when not found)
};
void publish(engine& e, std::string_view name, troupe::actor& a, std::string_view type);
/// Sends a lookup of `name` to `rank`; `done` runs on the engine thread.
void lookup(engine& e, int rank, std::string_view name,
            std::function<void(const lookup_answer&)> done);
int engine_rank(const engine& e) noexcept;

// ---------------------------------------------------------------- storage

/// A free list of blocks of one size (messages received from the network
/// are recycled through it: no allocation per message once warm). Blocks
/// beyond `keep` are returned to the allocator.
class free_list {
public:
    explicit free_list(std::size_t size) noexcept : size_(size) {}
    void* take() {
        lock_.lock();
        if (node* n = head_) {
            head_ = n->next;
            --count_;
            lock_.unlock();
            return n;
        }
        lock_.unlock();
        return ::operator new(size_);
    }
    void give(void* p) noexcept {
        lock_.lock();
        if (count_ < keep) {
            auto* n = static_cast<node*>(p);
            n->next = head_;
            head_ = n;
            ++count_;
            lock_.unlock();
            return;
        }
        lock_.unlock();
        ::operator delete(p);
    }
    static constexpr std::size_t keep = 4096;

private:
    struct node {
        node* next;
    };
    troupe::spinlock lock_{"troupe::remote message pool"};
    node* head_ = nullptr;
    std::size_t count_ = 0;
    std::size_t size_;
};

/// The free list for blocks of `Size` bytes (one per size, process-wide; a
/// cache, never freed, so late deletes stay valid).
template <std::size_t Size>
free_list& pool() noexcept {
    static free_list* fl = new free_list(Size < sizeof(void*) ? sizeof(void*) : Size);
    return *fl;
}

}  // namespace troupe::remote::detail
