#pragma once
// Internal building blocks of waituntil: the state one statement shares, the
// per-clause select node with its bookkeeping, resource holders and the
// small buffer behind run-time-length clauses. See docs/waituntil.md.
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

#include "troupe/context.hpp"
#include "troupe/select.hpp"
#include "troupe/timeout.hpp"

namespace troupe::detail::wu {

inline constexpr std::uintptr_t unsat = std::uintptr_t(select_status::unsat);
inline constexpr std::uintptr_t pending = std::uintptr_t(select_status::pending);
inline constexpr std::uintptr_t sat = std::uintptr_t(select_status::sat);
inline constexpr std::uintptr_t ran = std::uintptr_t(select_status::run);

/// What every clause of one statement shares; lives in waituntil's frame,
/// so it outlives every registration of the statement.
struct statement {
    explicit statement(bool exclusive_mode) noexcept
        : self(this_context()), exclusive(exclusive_mode) {}
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;

    context& self;
    const bool exclusive;
    /// Exclusive mode: the one status word, won by CAS unsat -> &node (a
    /// resource) or unsat -> sat (the otherwise clause).
    std::atomic<std::uintptr_t> status{unsat};
    /// General mode: +1 per wake() of a resource, -1 per pass of the waiter.
    std::atomic<int> counter{0};
    /// General mode: how many times the waiter decremented `counter`.
    int decrements = 0;
    /// Exclusive mode: the winner's unpark has been consumed.
    bool parked = false;
    /// Nodes registered so far.
    int registrations = 0;
    /// The statement's clause tree, for dumps (clauses_info): set before
    /// the waiter first parks, read only while it waits.
    void* tree = nullptr;
};

/// One select node of a statement plus what the statement must remember
/// about it. The node is constructed when the clause registers (it needs the
/// statement), so a clause can be moved around freely before that.
class element {
public:
    element() noexcept = default;
    element(const element&) = delete;
    element& operator=(const element&) = delete;
    ~element() {
        if (constructed_) node().~select_node();
    }

    /// Registers on `r`; true if the operation completed at once (the node
    /// was won by `r` during the call: no wake() will follow for it).
    template <class R>
    bool register_on(R& r, statement& s) {
        if (s.exclusive) ::new (static_cast<void*>(buf_)) select_node(s.self, s.status);
        else ::new (static_cast<void*>(buf_)) select_node(s.self, status_, s.counter);
        constructed_ = true;
        registered_ = true;  // before the call: unregister even if it throws
        ++s.registrations;
        immediate_ = r.register_select(node());
        return immediate_;
    }
    /// Unregisters once (later calls do nothing); returns what
    /// unregister_select said: true iff a completed body must still run.
    template <class R>
    bool unregister_from(R& r) {
        if (!registered_) return false;
        registered_ = false;
        return r.unregister_select(node());
    }

    select_node& node() noexcept { return *std::launder(reinterpret_cast<select_node*>(buf_)); }
    const select_node& node() const noexcept {
        return *std::launder(reinterpret_cast<const select_node*>(buf_));
    }
    bool registered() const noexcept { return registered_; }
    /// Whether register_on was called (the node exists).
    bool attempted() const noexcept { return constructed_; }

    // ---- exclusive mode
    /// Whether the shared status word value `st` names this node.
    bool won(std::uintptr_t st) const noexcept {
        return constructed_ && st == reinterpret_cast<std::uintptr_t>(&node());
    }
    /// Whether a resource won this node asynchronously: its wake() (an
    /// unpark) is owed to the waiter.
    bool owes_unpark(std::uintptr_t st) const noexcept { return won(st) && !immediate_; }

    // ---- general mode
    std::uintptr_t status() const noexcept { return status_.load(std::memory_order_acquire); }
    /// Records the status for this check pass; returns 1 if a resource
    /// claimed the node after registration (so owes, or made, one wake()).
    /// A resource claims a node *before* it completes the operation, so a
    /// claimed node is known complete only once its wake() was counted (see
    /// run_general); a node completed during registration always is.
    int snapshot() noexcept {
        snap_ = status();
        return constructed_ && !immediate_ && snap_ != unsat ? 1 : 0;
    }
    /// Claimed at the last snapshot and its body not run yet.
    bool runnable() const noexcept { return registered_ && !done_ && snap_ == sat; }
    /// The body has run (or is running): the predicate leaf is true, and
    /// the resource's unregister no longer reports it as still to run.
    void mark_ran() noexcept {
        done_ = true;
        status_.store(ran, std::memory_order_release);
    }
    bool done() const noexcept { return done_; }
    /// Whether a resource claimed this node after registration: its wake()
    /// (a counter increment) is owed. Final once the node is unregistered,
    /// since resources claim queued nodes only under their own lock.
    bool owes_increment() const noexcept {
        return constructed_ && !immediate_ && status() != unsat;
    }
    /// No resource will touch the node again: it was never claimed after
    /// registration, or its resource made its last touch (released).
    bool settled() const noexcept { return !owes_increment() || node().released(); }
    void set_pending(bool p) noexcept { pending_ = p; }
    bool pending() const noexcept { return pending_; }

private:
    alignas(select_node) unsigned char buf_[sizeof(select_node)];
    std::atomic<std::uintptr_t> status_{unsat};  // general mode's own status word
    std::uintptr_t snap_ = unsat;                // status at the last check pass
    bool constructed_ = false;
    bool registered_ = false;
    bool immediate_ = false;
    bool done_ = false;
    bool pending_ = false;
};

// -------------------------------------------------------------- ready hint

/// Optional extension of the selectable protocol: `select_ready_hint()`, a
/// cheap guess (no lock, stale reads allowed) whether register_select would
/// complete now. A pure-or statement registers first the clauses whose hint
/// is true, in order, and only then the others, so a ready clause behind
/// unready ones wins without the unready ones being queued and dequeued.
/// A wrong guess costs only that: every clause still registers before the
/// statement parks.
template <class R>
concept ready_hinted = requires(const R& r) {
    { r.select_ready_hint() } -> std::convertible_to<bool>;
};

/// A resource whose waits are usually long while the processor stays busy
/// (an I/O descriptor) declares `static constexpr bool select_times_waits =
/// true`: a statement over it stamps the wait's start when it parks, since
/// the watch thread times waits only when processors sleep and a dump would
/// otherwise print 0.000 s. Other resources skip the clock read (a
/// measurable share of a user-thread switch).
template <class R>
concept times_waits = R::select_times_waits;

template <class R>
bool ready_hint(const R& r) noexcept {
    if constexpr (ready_hinted<R>) return r.select_ready_hint();
    else return true;
}

// ----------------------------------------------------------------- holders

/// A resource named by an lvalue: the clause refers to it.
template <class R>
class ref_holder {
public:
    explicit ref_holder(R& r) noexcept : r_(&r) {}
    R& get() const noexcept { return *r_; }

private:
    R* r_;
};

/// A movable resource passed as a temporary (a channel clause object): the
/// clause owns it. Moved only before registration.
template <class R>
class value_holder {
public:
    explicit value_holder(R&& r) noexcept(std::is_nothrow_move_constructible_v<R>)
        : r_(std::move(r)) {}
    value_holder(value_holder&&) noexcept(std::is_nothrow_move_constructible_v<R>) = default;
    R& get() noexcept { return r_; }

private:
    R r_;
};

/// `on(timeout(d), ...)`: timeout is neither copyable nor movable, and its
/// timer node must outlive registration, so the clause owns a fresh timeout
/// of the same duration. "Moving" one before registration copies the
/// duration (nothing is armed yet).
class timeout_holder {
public:
    explicit timeout_holder(std::chrono::nanoseconds d) noexcept : t_(d) {}
    explicit timeout_holder(const timeout& t) noexcept : t_(t.duration()) {}
    timeout_holder(timeout_holder&& o) noexcept : t_(o.t_.duration()) {}
    timeout& get() noexcept { return t_; }

private:
    timeout t_;
};

// ------------------------------------------------------------------ bodies

/// The body of a clause written without one.
struct no_body {
    void operator()() const noexcept {}
};

/// Optional extension of the selectable protocol: `select_outcome()`, what
/// the selected operation did (a channel clause's channel_status), read after
/// on_selected. A body that takes it gets it (`on(ch.remove_into(v,
/// report_close), [&](channel_status s) { ... })`).
template <class R>
concept outcome_reporting = requires(const R& r) {
    r.select_outcome();
};

template <class R>
struct outcome_of {
    struct none {};
    using type = none;
};
template <outcome_reporting R>
struct outcome_of<R> {
    using type = decltype(std::declval<const R&>().select_outcome());
};

/// Whether `B` can be the body of a clause over `R`: callable with no
/// arguments, or with the resource's outcome.
template <class B, class R>
concept clause_body = std::is_invocable_v < std::decay_t<B>
& > ||
    (outcome_reporting<R> && std::is_invocable_v<std::decay_t<B>&, typename outcome_of<R>::type>);

/// Whether a body of type `B` takes the outcome of resource type `R`.
template <class B, class R, class... Lead>
constexpr bool takes_outcome() {
    if constexpr (outcome_reporting<R>)
        return std::is_invocable_v<B&, Lead..., typename outcome_of<R>::type>;
    else return false;
}

/// Runs a clause's body over resource `r`, passing r's outcome if the body
/// takes it.
template <class B, class R>
void invoke_body(B& b, const R& r) {
    if constexpr (takes_outcome<B, R>()) std::invoke(b, r.select_outcome());
    else std::invoke(b);
}
/// A run-time-length clause's body gets the ready element's index if it
/// takes one, and the element's outcome after it if it takes that too.
template <class B, class R>
void invoke_body(B& b, std::size_t index, const R& r) {
    if constexpr (takes_outcome<B, R, std::size_t>()) std::invoke(b, index, r.select_outcome());
    else if constexpr (std::is_invocable_v<B&, std::size_t>) std::invoke(b, index);
    else std::invoke(b);
}

// ------------------------------------------------------------ small buffer

/// Storage for the slots of a run-time-length clause: `Inline` slots in
/// place, a single allocation beyond that. Slots are built in place (they
/// hold select nodes and may hold immovable resources) and never move.
template <class Slot, std::size_t Inline>
class slot_buffer {
public:
    slot_buffer() noexcept = default;
    /// Only while empty (before the statement starts).
    slot_buffer(slot_buffer&&) noexcept {}
    slot_buffer(const slot_buffer&) = delete;
    slot_buffer& operator=(const slot_buffer&) = delete;
    ~slot_buffer() {
        clear();
        if (data_ != inline_slots()) ::operator delete (data_, std::align_val_t{alignof(Slot)});
    }

    /// Makes room for `n` slots (once, before any emplace).
    void reserve(std::size_t n) {
        data_ = n <= Inline ? inline_slots()
                            : static_cast<Slot*>(::operator new (n * sizeof(Slot),
                                                                 std::align_val_t{alignof(Slot)}));
    }
    template <class... A>
    void emplace_back(A&&... args) {
        ::new (static_cast<void*>(data_ + size_)) Slot(std::forward<A>(args)...);
        ++size_;
    }
    Slot& operator[](std::size_t i) noexcept { return std::launder(data_)[i]; }
    const Slot& operator[](std::size_t i) const noexcept { return std::launder(data_)[i]; }
    std::size_t size() const noexcept { return size_; }

private:
    Slot* inline_slots() noexcept { return reinterpret_cast<Slot*>(inline_); }
    void clear() noexcept {
        while (size_ > 0) (*this)[--size_].~Slot();
    }

    alignas(Slot) unsigned char inline_[Inline * sizeof(Slot)];
    Slot* data_ = inline_slots();
    std::size_t size_ = 0;
};

}  // namespace troupe::detail::wu
