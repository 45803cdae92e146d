#pragma once
/// Select clauses of channel<T>: the objects that `waituntil` waits on.
///
///     int v;
///     auto clause = ch.remove_into(v);        // or insert_from(x), remove_discard()
///     troupe::select_node n{troupe::this_context()};
///     if (!clause.register_select(n)) troupe::park();  // a partner completes it
///     clause.unregister_select(n);
///     if (clause.on_selected(n)) use(v);      // throws channel_closed after close
///
/// Non-throwing forms (`remove_into(v, troupe::report_close)`, with or
/// without stop_on_close, and `insert_from(v, troupe::report_close)`): a
/// closed channel does not throw; the clause is selected with outcome
/// `channel_status::closed` (nothing moved), which a waituntil body taking a
/// channel_status receives (see waituntil.hpp for the Go side by side).
/// The `ok` forms (`remove_into(v, ok)`, `insert_from(v, ok)`, Go's
/// `v, ok := <-ch`) are the same clauses writing the outcome into a bool
/// (true: moved; false: closed) before the body runs; the bool doubles as
/// the clause's `when` guard, so a select loop needs no other flag.
///
/// Exceptions: register_select and unregister_select never throw (no
/// allocation, nothrow moves). on_selected throws channel_closed (or
/// channel_closed_with<T>, holding the clause's element: strong) after close
/// unless report_close; a remove clause's assignment into the variable is
/// the only user code it runs (T's move assignment).
///
/// Channel destroyed while a clause waits on it: the clause is released
/// (it never touches the channel again: its record holds the name; see
/// detail::link) and on_selected throws channel_destroyed, in every form
/// (report_close and `ok` included): the destruction is a program error,
/// never reported as a close.
///
/// A clause implements the select_node protocol (troupe::selectable) for one
/// channel operation. Its node's status is won *before* any element moves, so
/// an element is never delivered to a statement that already took another
/// clause; two selectors at both ends of a rendezvous resolve through the
/// PENDING handshake (see docs/channels.md). A clause must stay in place
/// (not be moved) from register_select until unregister_select, and must
/// not outlive its channel. Included by channel.hpp.
#include <exception>
#include <optional>
#include <utility>

#include "troupe/channel_closed.hpp"
#include "troupe/detail/channel_waiter.hpp"
#include "troupe/select.hpp"

namespace troupe {

template <class T>
class channel;

/// Select clause: remove one element from a channel into a variable (or
/// discard it). Returned by channel::remove_into / remove_discard. Must stay
/// in place from register_select until unregister_select.
template <class T>
class channel_remove_clause {
public:
    channel_remove_clause(channel<T>& ch, T* dst, bool stop, bool report = false,
                          bool* ok = nullptr) noexcept
        : ch_(&ch), dst_(dst), ok_(ok), stop_(stop), report_(report || ok) {}
    /// Only before registration (the state is not carried over).
    channel_remove_clause(channel_remove_clause&& o) noexcept
        : ch_(o.ch_), dst_(o.dst_), ok_(o.ok_), stop_(o.stop_), report_(o.report_) {}
    channel_remove_clause& operator=(channel_remove_clause&&) = delete;
    ~channel_remove_clause() {
        // Delivered but never selected (the statement unwound): drop it.
        if (w_.state.load(std::memory_order_acquire) == detail::handoff::done && !taken_)
            slot_.get().~T();
    }

    /// A lock-free guess (waituntil's ready hint) whether register_select
    /// would complete now: an element is buffered, or the channel is closed.
    /// Rendezvous channels always say yes (a waiting partner shows only
    /// under the lock).
    bool select_ready_hint() const noexcept { return ch_->remove_ready_hint(); }
    /// True if an element was removed (or the channel found closed) now.
    bool register_select(select_node& n) {
        w_.elem = slot_.storage();
        n.attach(w_);
        return ch_->register_remove(n, w_, stop_);
    }
    /// Dequeues the node if still queued; true iff a general-mode clause
    /// completed and its body must still run.
    bool unregister_select(select_node& n) { return ch_->unregister(ch_->consumers_, n, w_); }
    /// How a dump of a waituntil names the clause: its channel.
    const char* select_kind() const noexcept { return "channel remove"; }
    const char* select_name() const noexcept { return ch_->name(); }
    const void* select_resource() const noexcept { return ch_; }
    /// Moves the element into the variable and returns true; after close,
    /// throws channel_closed (or returns false while an exception unwinds),
    /// or, in the report_close form, returns true with outcome() `closed`.
    bool on_selected(select_node&) {
        switch (w_.state.load(std::memory_order_acquire)) {
        case detail::handoff::done:
            outcome_ = channel_status::success;
            if (ok_) *ok_ = true;
            if (taken_) return true;
            taken_ = true;
            if (dst_) *dst_ = slot_.take();
            else slot_.get().~T();
            return true;
        case detail::handoff::closed:
            outcome_ = channel_status::closed;
            if (ok_) *ok_ = false;
            if (report_) return true;
            if (std::uncaught_exceptions() > 0) return false;
            // The channel may be gone (destroyed after the close): only its
            // address and the name read at registration are used.
            channel<T>::throw_closed_remove(ch_, w_.name);
        case detail::handoff::destroyed:
            if (std::uncaught_exceptions() > 0) return false;
            throw channel_destroyed(ch_, w_.name, channel_operation::remove);  // address only
        default: return false;
        }
    }

    /// What the selected operation did (passed to a body that takes a
    /// channel_status): `success`, or `closed` (report_close forms only).
    channel_status select_outcome() const noexcept { return outcome_; }

    /// For a caller that finishes the clause itself (channel::remove with a
    /// stop_token), in place of on_selected: whether an element was
    /// delivered, and taking it out (once; only if delivered).
    bool delivered() const noexcept {
        return w_.state.load(std::memory_order_acquire) == detail::handoff::done && !taken_;
    }
    T take() noexcept {
        taken_ = true;
        return slot_.take();
    }

private:
    channel<T>* ch_;
    T* dst_;
    bool* ok_;  // the `ok` forms: receives the outcome
    bool stop_;
    bool report_;
    bool taken_ = false;
    channel_status outcome_ = channel_status::success;
    detail::channel_waiter w_;
    detail::element_slot<T> slot_;
};

/// Select clause: insert an element into a channel. Returned by
/// channel::insert_from. Must stay in place from register_select until
/// unregister_select.
template <class T>
class channel_insert_clause {
public:
    channel_insert_clause(channel<T>& ch, T& src, bool report = false, bool* ok = nullptr) noexcept
        : ch_(&ch), src_(&src), ok_(ok), report_(report || ok) {}
    channel_insert_clause(channel<T>& ch, T&& v) noexcept
        : ch_(&ch), owned_(std::move(v)), src_(&*owned_) {}
    /// Only before registration.
    channel_insert_clause(channel_insert_clause&& o) noexcept
        : ch_(o.ch_),
          owned_(std::move(o.owned_)),
          src_(owned_ ? &*owned_ : o.src_),
          ok_(o.ok_),
          report_(o.report_) {}
    channel_insert_clause& operator=(channel_insert_clause&&) = delete;

    /// A lock-free guess (waituntil's ready hint) whether register_select
    /// would complete now: the buffer has room, or the channel is closed.
    /// Rendezvous channels always say yes.
    bool select_ready_hint() const noexcept { return ch_->insert_ready_hint(); }
    bool register_select(select_node& n) {
        w_.elem = src_;
        n.attach(w_);
        return ch_->register_insert(n, w_, *src_);
    }
    bool unregister_select(select_node& n) { return ch_->unregister(ch_->producers_, n, w_); }
    /// How a dump of a waituntil names the clause: its channel.
    const char* select_kind() const noexcept { return "channel insert"; }
    const char* select_name() const noexcept { return ch_->name(); }
    const void* select_resource() const noexcept { return ch_; }
    /// True when the element went in; after close, throws
    /// channel_closed_with<T> holding the element (or returns false while
    /// an exception unwinds), or, in the report_close form, returns true
    /// with outcome() `closed` (the element stays in the variable).
    bool on_selected(select_node&) {
        switch (w_.state.load(std::memory_order_acquire)) {
        case detail::handoff::done:
            outcome_ = channel_status::success;
            if (ok_) *ok_ = true;
            return true;
        case detail::handoff::closed:
            outcome_ = channel_status::closed;
            if (ok_) *ok_ = false;
            if (report_) return true;
            if (std::uncaught_exceptions() > 0) return false;
            throw channel_closed_with<T>(ch_, w_.name, std::move(*src_));  // ch_: address only
        case detail::handoff::destroyed:  // the element stays in the variable
            if (std::uncaught_exceptions() > 0) return false;
            throw channel_destroyed(ch_, w_.name, channel_operation::insert);
        default: return false;
        }
    }

    /// What the selected operation did: `success`, or `closed`
    /// (report_close form only).
    channel_status select_outcome() const noexcept { return outcome_; }

private:
    channel<T>* ch_;
    std::optional<T> owned_;
    T* src_;
    bool* ok_ = nullptr;  // the `ok` forms: receives the outcome
    bool report_ = false;
    channel_status outcome_ = channel_status::success;
    detail::channel_waiter w_;
};

static_assert(selectable<channel_remove_clause<int>>);
static_assert(selectable<channel_insert_clause<int>>);

}  // namespace troupe
