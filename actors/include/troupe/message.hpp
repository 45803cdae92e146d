#pragma once
/// The base of every actor message.
///
///     struct add_msg : troupe::message {
///         int n;
///         explicit add_msg(int n) : n(n) {}
///     };
///     add_msg add{5};                        // reusable (Nodelete)
///     auto* once = new add_msg{7};
///     once->set_allocation(troupe::Delete);  // freed after it is received
///
/// A message is sent by reference: the executor never copies it, so it must
/// outlive every receive of it. One message may be sent to many actors (and
/// to one actor many times); its allocation action runs after each receive,
/// as set at that time. The destructor is virtual, so `Delete` through the
/// base frees the whole derived object.
///
/// Checked builds report a message destroyed without ever being sent, and
/// one destroyed while a send of it is still queued (a message declared in
/// a loop body and sent by reference: its receive would read a dead object;
/// send such messages by value with `troupe::send<M>`), naming the message
/// type and the actor it was queued for.
#include <atomic>
#include <cstdint>
#include <source_location>

#include "troupe/allocation.hpp"
#include "troupe/config.hpp"

namespace troupe {

class message;

namespace detail {
struct send_access;
struct worker_access;
struct value_block_access;
struct dispatch_names;
void message_destroyed_unsent(const message& m) noexcept;
void message_destroyed_queued(const message& m, const dispatch_names* to,
                              std::int32_t pending) noexcept;
}  // namespace detail

class message {
public:
    /// A message with allocation `Nodelete`. (The source location names the
    /// derived type in checked-build reports; never pass it yourself.)
    message(std::source_location where = std::source_location::current()) noexcept
        : where_(where) {}
    /// A message with allocation `a` (`Finished` is stored as `Nodelete`: for
    /// messages the two mean the same).
    explicit message(allocation a,
                     std::source_location where = std::source_location::current()) noexcept
        : alloc_(a == Finished ? Nodelete : a), where_(where) {}

    /// Copies the payload's allocation; the copy is a new, unsent message.
    message(const message& o) noexcept : alloc_(o.alloc_), where_(o.where_) {}
    message& operator=(const message& o) noexcept {
        alloc_ = o.alloc_;
        return *this;
    }

    virtual ~message() {
#if defined(TROUPE_CHECKED)
        if (const std::int32_t n = queued_.load(std::memory_order_acquire); n > 0)
            detail::message_destroyed_queued(*this, queued_for_.load(std::memory_order_relaxed), n);
        else if (!sent_.load(std::memory_order_relaxed)) detail::message_destroyed_unsent(*this);
#endif
    }

    /// Sets what happens to this message after the current (or next) receive;
    /// returns the previous value. Call it from a behaviour or before sending.
    allocation set_allocation(allocation a) noexcept {
        allocation old = alloc_;
        alloc_ = a;
        return old;
    }
    /// The allocation action that will run after the next receive.
    allocation get_allocation() const noexcept { return alloc_; }

    /// Where the most-derived message was constructed (used in reports).
    const std::source_location& origin() const noexcept { return where_; }

protected:
    /// For the builtin poison pills: exempt from the "never sent" check.
    struct builtin_tag {};
    // (No source location: GCC 12 misplaces constant-initialised ones of
    // inline variables in COMDAT sections a static link discards.)
#if defined(TROUPE_CHECKED)
    constexpr explicit message(builtin_tag) noexcept : sent_(true) {}
#else
    constexpr explicit message(builtin_tag) noexcept {}
#endif

private:
    friend struct detail::send_access;
    friend struct detail::worker_access;
    friend struct detail::value_block_access;

    allocation alloc_ = Nodelete;
    // A value send's message (troupe::send<M>): its block's size in 8-byte
    // words, the block being exactly that many bytes from ::operator new
    // (or a worker's free list of such blocks), which `Delete` returns to
    // the running worker's free list. 0 for every other message (and for
    // a copy: the copy's storage is its maker's).
    std::uint8_t value_block_words_ = 0;
#if defined(TROUPE_CHECKED)
    // Set by every send; also set for messages that are exempt from the
    // "destroyed unsent" check (the builtin poison pills).
    std::atomic<bool> sent_{false};
    // Sends of this message not yet delivered: incremented by each accepted
    // send, decremented by the worker as the delivery starts (or drops it).
    // Non-zero in the destructor means a queued envelope would dangle.
    std::atomic<std::int32_t> queued_{0};
    // The actor/message type names of the latest accepted send (reports).
    std::atomic<const detail::dispatch_names*> queued_for_{nullptr};
#endif
    std::source_location where_;
};

}  // namespace troupe
