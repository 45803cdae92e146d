#pragma once
/// What channel operations report: the status of a non-blocking operation,
/// the consumer's close policy, and the exceptions a closed channel throws.
///
///     try {
///         for (;;) ch.insert(make());                 // producer
///     } catch (troupe::channel_closed_with<job>& e) {
///         requeue(std::move(e.value()));              // the element comes back
///     }
///
///     job j;
///     switch (ch.try_remove(j)) {                     // never throws
///     case troupe::channel_status::success: run(j); break;
///     case troupe::channel_status::empty:   idle(); break;
///     case troupe::channel_status::closed:  return;
///     default: break;
///     }
///
/// Close policy. Cforall raises a *resumption* at a consumer of a closed
/// channel: a handler that returns makes the remove continue without blocking
/// (drain), an unhandled one becomes a termination (stop at once). C++ has no
/// resumption, and a per-thread handler would be state shared across calls,
/// so troupe makes the choice an argument of each call instead:
///   - `ch.remove()` drains: it returns buffered elements after close and
///     throws `channel_closed` once the channel is closed *and* empty
///     (the "handled resumption");
///   - `ch.remove(troupe::stop_on_close)` throws as soon as the channel is
///     closed, even with elements left (the "unhandled resumption").
/// Each consumer decides locally, per call site, with no flag shared with
/// other threads; the same two forms exist for `try_remove` (returning
/// `channel_status::closed` instead of throwing) and for select clauses.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace troupe {

/// Result of a non-blocking channel operation (never an exception).
enum class channel_status {
    success,  ///< the element was inserted / removed
    empty,    ///< try_remove: nothing to take now (capacity 0: no producer waits)
    full,     ///< try_insert: no room now (capacity 0: no consumer waits)
    closed,   ///< the channel is closed (try_remove: closed and drained, or stop_on_close)
};

/// Which operation met the closed channel.
enum class channel_operation { insert, remove };

/// Tag: a remove that stops as soon as the channel is closed, leaving any
/// buffered elements in it (see the header comment).
struct stop_on_close_t {
    explicit constexpr stop_on_close_t() = default;
};
inline constexpr stop_on_close_t stop_on_close{};

/// Tag: a select clause that reports a closed channel to its body instead
/// of throwing (Go's `v, ok := <-ch`). The body may take a channel_status:
/// `success` when the operation happened, `closed` when the channel was
/// closed (nothing moved; an insert clause's element stays in its
/// variable). See channel_select.hpp.
struct report_close_t {
    explicit constexpr report_close_t() = default;
};
inline constexpr report_close_t report_close{};

namespace detail {
/// An error message naming a channel, and where the name sits in it.
struct channel_error_text {
    std::string text;
    std::size_t name_at = 0, name_len = 0;
};
channel_error_text compose_channel_error(const void* channel, const char* name,
                                         channel_operation op, const char* state);
}  // namespace detail

namespace detail {
/// What channel_closed and channel_destroyed share: the channel's address,
/// the operation, and where the channel's name sits in the message.
class channel_error_fields {
public:
    /// Address of the channel (for comparison only: it may no longer exist).
    const void* channel() const noexcept { return channel_; }
    channel_operation operation() const noexcept { return op_; }
    bool is_insert() const noexcept { return op_ == channel_operation::insert; }
    bool is_remove() const noexcept { return op_ == channel_operation::remove; }

protected:
    channel_error_fields(const void* channel, channel_operation op,
                         const channel_error_text& t) noexcept
        : channel_(channel), op_(op), name_at_(t.name_at), name_len_(t.name_len) {}
    std::string_view name_in(const char* what) const noexcept {
        return std::string_view{what}.substr(name_at_, name_len_);
    }

private:
    const void* channel_;
    channel_operation op_;
    std::size_t name_at_, name_len_;
};
}  // namespace detail

/// Thrown by blocking channel operations that meet a closed channel: every
/// insert after (or blocked at) close, and removes per the close policy.
/// Catch this type for both directions; inserts throw the derived
/// `channel_closed_with<T>`, which carries the element back.
class channel_closed : public std::runtime_error, public detail::channel_error_fields {
public:
    channel_closed(const void* channel, const char* name, channel_operation op)
        : channel_closed(channel, op, detail::compose_channel_error(channel, name, op, "closed")) {}

    /// The name the channel was constructed with ("" if none). A view into
    /// this exception's own message: valid as long as the exception is, even
    /// after the channel (and the string it was named with) are gone.
    std::string_view name() const noexcept { return name_in(what()); }

private:
    channel_closed(const void* channel, channel_operation op, const detail::channel_error_text& t)
        : std::runtime_error(t.text), channel_error_fields(channel, op, t) {}
};

/// Thrown, instead of any close outcome, to a thread that was blocked on a
/// channel (a plain insert or remove, a range-for, a select clause —
/// report_close and `ok` forms included) when the channel was *destroyed*
/// under it: a program error (e.g. class members declared in the wrong
/// order), never a normal end of the stream. It is not a channel_closed,
/// so a loop written to end on close does not end silently on it. A
/// producer's element was not moved (it is still in its variable). Checked
/// builds also report the destruction (misuse_kind::released_waiters).
class channel_destroyed : public std::logic_error, public detail::channel_error_fields {
public:
    channel_destroyed(const void* channel, const char* name, channel_operation op)
        : channel_destroyed(channel, op,
                            detail::compose_channel_error(channel, name, op, "destroyed")) {}

    /// The channel's name ("" if none); valid as long as the exception.
    std::string_view name() const noexcept { return name_in(what()); }

private:
    channel_destroyed(const void* channel, channel_operation op,
                      const detail::channel_error_text& t)
        : std::logic_error(t.text), channel_error_fields(channel, op, t) {}
};

/// The exception a producer gets: `value()` is the element it tried to
/// insert, moved out of the channel's hands, so nothing is ever lost.
/// For a move-only T the element is shared between copies of the exception
/// object (the language may copy exception objects).
template <class T>
class channel_closed_with : public channel_closed {
public:
    channel_closed_with(const void* channel, const char* name, T&& value)
        : channel_closed(channel, name, channel_operation::insert),
          value_(make(std::move(value))) {}

    /// The element that was not inserted.
    T& value() noexcept { return get(value_); }
    const T& value() const noexcept { return get(value_); }

private:
    static constexpr bool by_value = std::is_copy_constructible_v<T>;
    using storage = std::conditional_t<by_value, T, std::shared_ptr<T>>;
    static storage make(T&& v) {
        if constexpr (by_value) return storage(std::move(v));
        else return std::make_shared<T>(std::move(v));
    }
    static T& get(storage& s) noexcept {
        if constexpr (by_value) return s;
        else return *s;
    }
    static const T& get(const storage& s) noexcept {
        if constexpr (by_value) return s;
        else return *s;
    }
    storage value_;
};

inline detail::channel_error_text detail::compose_channel_error(const void* channel,
                                                                const char* name,
                                                                channel_operation op,
                                                                const char* state) {
    channel_error_text c;
    c.text = op == channel_operation::insert ? "insert into " : "remove from ";
    c.text += state;
    c.text += " channel";
    c.name_at = c.text.size();
    c.name_len = 0;
    if (name && *name) {
        c.text += " '";
        c.name_at = c.text.size();
        c.text += name;
        c.name_len = c.text.size() - c.name_at;
        c.text += "'";
    }
    char addr[32];
    std::snprintf(addr, sizeof addr, " (%p)", channel);
    c.text += addr;
    return c;
}

}  // namespace troupe
