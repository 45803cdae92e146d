#pragma once
// (About 490 lines: leaves and junctions keep one select protocol, whose
// invariants are stated once, here.)
// The clause tree of a waituntil statement, built by expression templates:
// leaves (one resource, or a run-time-length range of resources) joined by
// `|` and `&` nodes. The tree's type is the statement's shape; its eval() is
// the statement predicate, generated at compile time. Leaves own their
// select nodes; junctions refer to their subtrees. The whole statement thus
// lives in the temporaries of the caller's full-expression (on the stack),
// allocates nothing and copies nothing. See docs/waituntil.md.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <iterator>
#include <ranges>
#include <string>
#include <type_traits>
#include <utility>

#include "troupe/defaults/waituntil.hpp"
#include "troupe/detail/waituntil_element.hpp"

namespace troupe::detail::wu {

/// A subtree's value under the predicate. A subtree whose clauses are all
/// disabled by guards is `absent`: it drops out of its parent, which is
/// what makes a disabled clause true under `&` and false under `|`.
enum class tri : unsigned char { no, yes, absent };

constexpr tri tri_or(tri a, tri b) noexcept {
    if (a == tri::absent) return b;
    if (b == tri::absent) return a;
    return a == tri::yes || b == tri::yes ? tri::yes : tri::no;
}
constexpr tri tri_and(tri a, tri b) noexcept {
    if (a == tri::absent) return b;
    if (b == tri::absent) return a;
    return a == tri::yes && b == tri::yes ? tri::yes : tri::no;
}

/// Dumps (troupe/dump.hpp): appends "<kind> '<name>' (<address>)" for one
/// clause's resource. A resource names itself with optional members:
/// select_kind() ("blocking_lock", "channel remove", ...; else
/// "resource"), select_name() or name() (else none), select_resource() (the
/// object it acts on, e.g. a channel clause's channel; else itself). Runs
/// on the dumping thread: reads only what does not change during a wait.
template <class R>
void describe_clause(std::string& out, const R& r) {
    const char* kind = "resource";
    if constexpr (requires { r.select_kind(); }) kind = r.select_kind();
    const char* name = nullptr;
    if constexpr (requires { r.select_name(); }) name = r.select_name();
    else if constexpr (requires { r.name(); }) name = r.name();
    const void* address = &r;
    if constexpr (requires { r.select_resource(); }) address = r.select_resource();
    out += kind;
    if (name) {
        out += " '";
        out += name;
        out += "'";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, " (%p)", address);
    out += buf;
}

/// Runs `on_selected` and the body of a won node; true if the body ran.
template <class R, class Run>
bool run_selected(R& r, element& e, Run&& body) {
    if (!r.on_selected(e.node())) return false;
    body();
    return true;
}

/// Runs the body of a general-mode node that was satisfied, marking it run
/// first and unregistering it right after (so a lock is held exactly while
/// its body runs), also when the body throws.
template <class R, class Run>
bool run_and_unregister(R& r, element& e, Run&& body) {
    e.mark_ran();
    bool ran_body = false;
    std::exception_ptr error;  // unregister may yield: not inside the handler
    try {
        ran_body = run_selected(r, e, body);
    } catch (...) {
        error = std::current_exception();
    }
    e.unregister_from(r);
    if (error) std::rethrow_exception(error);
    return ran_body;
}

/// Runs a body that a resource's unregister reported as completed but not
/// run (cleanup of a general-mode statement). The first exception is kept in
/// `first`; the other pending bodies still run.
template <class R, class Run>
bool run_pending(R& r, element& e, Run&& body, std::exception_ptr& first) {
    if (!e.pending()) return false;
    e.set_pending(false);
    e.mark_ran();
    try {
        return run_selected(r, e, body);
    } catch (...) {
        if (!first) first = std::current_exception();
        return false;
    }
}

// ------------------------------------------------------------------ leaves

/// A leaf over one resource: `on(resource, body)`.
template <class Holder, class Body>
class clause {
public:
    static constexpr bool is_waituntil_tree = true;
    static constexpr std::size_t leaves = 1;
    static constexpr bool has_and = false;
    static constexpr bool hinted =
        ready_hinted<std::remove_cvref_t<decltype(std::declval<Holder&>().get())>>;
    static constexpr bool all_hinted = hinted;
    static constexpr bool timed =
        times_waits<std::remove_cvref_t<decltype(std::declval<Holder&>().get())>>;

    /// Builds the holder from `r` and the body from `b` in place.
    template <class R, class B>
    clause(R&& r, B&& b) : res_(std::forward<R>(r)), body_(std::forward<B>(b)) {}
    // A clause tree exists only as the temporary written inside one
    // waituntil call: it cannot be copied or moved, so a stored tree can be
    // passed nowhere (see immovable_tree).
    // The compiler quotes these lines in its diagnostic: one line each.
    // clang-format off
    clause(const clause&) = delete;  // waituntil: a clause tree cannot be stored, copied or moved; write it inside the waituntil call
    clause(clause&&) = delete;  // waituntil: a clause tree cannot be stored, copied or moved; write it inside the waituntil call
    // clang-format on
    clause& operator=(clause&&) = delete;

    void add_guard(bool g) noexcept { guard_ = guard_ && g; }
    bool enabled() const noexcept { return guard_; }
    tri eval() const noexcept { return !guard_ ? tri::absent : el_.done() ? tri::yes : tri::no; }
    template <class F>
    bool visit(F& f, std::size_t& index) {
        return f(*this, index++);
    }
    void prepare() {}
    bool body_ran() const noexcept { return body_ran_; }

    // exclusive mode: pass 0 registers unless the ready hint says the
    // operation cannot complete now; pass 1 registers what pass 0 skipped.
    bool xregister(statement& s, std::size_t, int pass) {
        if (el_.attempted() || (pass == 0 && !ready_hint(res_.get()))) return false;
        return el_.register_on(res_.get(), s);
    }
    bool xowns(std::uintptr_t st) const noexcept { return el_.won(st); }
    bool xowes_unpark(std::uintptr_t st) const noexcept { return el_.owes_unpark(st); }
    void xunregister_losers(std::uintptr_t st) {
        if (!el_.won(st)) el_.unregister_from(res_.get());
    }
    bool xrun(std::uintptr_t) {
        body_ran_ = run_selected(res_.get(), el_, [&] { invoke_body(body_, res_.get()); });
        return body_ran_;
    }

    // general mode
    void gregister(statement& s, std::size_t) { el_.register_on(res_.get(), s); }
    int gsnapshot() noexcept { return el_.snapshot(); }
    template <class Done>
    void gcheck(Done&, std::size_t) {
        if (el_.runnable())
            body_ran_ |=
                run_and_unregister(res_.get(), el_, [&] { invoke_body(body_, res_.get()); });
    }
    void gunregister_rest() {
        if (!el_.done()) el_.set_pending(el_.unregister_from(res_.get()));
    }
    int gowed() const noexcept { return el_.owes_increment() ? 1 : 0; }
    bool gsettled() const noexcept { return el_.settled(); }
    void grun_pending(std::exception_ptr& first, std::size_t) {
        body_ran_ |= run_pending(
            res_.get(), el_, [&] { invoke_body(body_, res_.get()); }, first);
    }

    void unregister_all() { el_.unregister_from(res_.get()); }

    /// Dumps: "blocking_lock 'ledger' (0x...)" (describe_clause).
    void describe(std::string& out) { describe_clause(out, res_.get()); }

private:
    Holder res_;
    Body body_;
    bool guard_ = true;
    bool body_ran_ = false;
    element el_;
};

/// Identity projection of `on_any(range, body)`: the elements are the
/// resources.
struct identity_projection {
    template <class E>
    E&& operator()(E&& e) const noexcept {
        return std::forward<E>(e);
    }
};

/// A leaf over a run-time-length range: `on_any(range, [projection,] body)`.
/// True under the predicate once one element's body ran; the body gets that
/// element's index. Its nodes live in place up to
/// defaults::waituntil::waituntil_range_slots elements.
template <class View, class Proj, class Body>
class range_clause {
    using reference = std::ranges::range_reference_t<View>;
    using produced = std::invoke_result_t<Proj&, reference>;
    using resource = std::remove_cvref_t<produced>;
    static_assert(selectable<resource>,
                  "troupe::on_any: the range's elements (or what the projection returns) must be "
                  "selectable");

    // An lvalue from the projection is referred to; a prvalue (a channel
    // clause object, a timeout) is built in place and owned.
    struct by_ref_slot {
        by_ref_slot(Proj& p, reference e) : r(&std::invoke(p, std::forward<reference>(e))) {}
        resource& get() noexcept { return *r; }
        resource* r;
        element el;
    };
    struct by_value_slot {
        by_value_slot(Proj& p, reference e) : r(std::invoke(p, std::forward<reference>(e))) {}
        resource& get() noexcept { return r; }
        resource r;
        element el;
    };
    using slot =
        std::conditional_t<std::is_lvalue_reference_v<produced>, by_ref_slot, by_value_slot>;

public:
    static constexpr bool is_waituntil_tree = true;
    static constexpr std::size_t leaves = 1;
    static constexpr bool has_and = false;
    static constexpr bool hinted = ready_hinted<resource>;
    static constexpr bool all_hinted = hinted;
    static constexpr bool timed = times_waits<resource>;

    range_clause(View v, Proj p, Body b)
        : view_(std::move(v)), proj_(std::move(p)), body_(std::move(b)) {}
    // The compiler quotes these lines in its diagnostic: one line each.
    // clang-format off
    range_clause(const range_clause&) = delete;  // waituntil: a clause tree cannot be stored, copied or moved; write it inside the waituntil call
    range_clause(range_clause&&) = delete;  // waituntil: a clause tree cannot be stored, copied or moved; write it inside the waituntil call
    // clang-format on
    range_clause& operator=(range_clause&&) = delete;

    void add_guard(bool g) noexcept { guard_ = guard_ && g; }
    /// An empty range is a disabled clause (nothing could ever wake us).
    bool enabled() const noexcept { return guard_ && std::ranges::size(view_) > 0; }
    tri eval() const noexcept { return !enabled() ? tri::absent : done_ ? tri::yes : tri::no; }
    template <class F>
    bool visit(F& f, std::size_t& index) {
        return f(*this, index++);
    }
    /// Evaluates every element's target (the projection) once, before any
    /// registration.
    void prepare() {
        if (!enabled()) return;
        const std::size_t n = std::ranges::size(view_);
        slots_.reserve(n);
        auto it = std::ranges::begin(view_);
        for (std::size_t i = 0; i < n; ++i, ++it) slots_.emplace_back(proj_, *it);
    }
    bool body_ran() const noexcept { return body_ran_; }

    // exclusive mode: register in order from the rotation start; stop at an
    // immediate win or once the statement was won meanwhile.
    bool xregister(statement& s, std::size_t rotation, int pass) {
        const std::size_t n = slots_.size(), start = rotation % n;
        for (std::size_t k = 0; k < n; ++k) {
            slot& sl = slots_[(start + k) % n];
            if (sl.el.attempted() || (pass == 0 && !ready_hint(sl.get()))) continue;
            if (sl.el.register_on(sl.get(), s)) return true;
            if (s.status.load(std::memory_order_relaxed) != unsat) return false;
        }
        return false;
    }
    bool xowns(std::uintptr_t st) noexcept { return find(st) < slots_.size(); }
    bool xowes_unpark(std::uintptr_t st) noexcept {
        const std::size_t i = find(st);
        return i < slots_.size() && slots_[i].el.owes_unpark(st);
    }
    void xunregister_losers(std::uintptr_t st) {
        for (std::size_t i = 0; i < slots_.size(); ++i)
            if (!slots_[i].el.won(st)) slots_[i].el.unregister_from(slots_[i].get());
    }
    bool xrun(std::uintptr_t st) {
        const std::size_t i = find(st);
        done_ = true;
        if (run_selected(slots_[i].get(), slots_[i].el,
                         [&] { invoke_body(body_, i, slots_[i].get()); }))
            body_ran_ = true;
        return body_ran_;
    }

    // general mode
    void gregister(statement& s, std::size_t rotation) {
        const std::size_t n = slots_.size(), start = rotation % n;
        for (std::size_t k = 0; k < n; ++k) {
            slot& sl = slots_[(start + k) % n];
            sl.el.register_on(sl.get(), s);
        }
    }
    int gsnapshot() noexcept {
        int claimed = 0;
        for (std::size_t i = 0; i < slots_.size(); ++i) claimed += slots_[i].el.snapshot();
        return claimed;
    }
    template <class Done>
    void gcheck(Done& statement_done, std::size_t rotation) {
        const std::size_t n = slots_.size(), start = rotation % n;
        for (std::size_t k = 0; k < n; ++k) {
            if (statement_done()) return;
            const std::size_t i = (start + k) % n;
            slot& sl = slots_[i];
            if (sl.el.runnable()) {
                done_ = true;
                body_ran_ |= run_and_unregister(sl.get(), sl.el,
                                                [&] { invoke_body(body_, i, slots_[i].get()); });
            }
        }
    }
    void gunregister_rest() {
        for (std::size_t i = 0; i < slots_.size(); ++i)
            if (!slots_[i].el.done())
                slots_[i].el.set_pending(slots_[i].el.unregister_from(slots_[i].get()));
    }
    int gowed() const noexcept {
        int owed = 0;
        for (std::size_t i = 0; i < slots_.size(); ++i)
            owed += slots_[i].el.owes_increment() ? 1 : 0;
        return owed;
    }
    bool gsettled() const noexcept {
        for (std::size_t i = 0; i < slots_.size(); ++i)
            if (!slots_[i].el.settled()) return false;
        return true;
    }
    void grun_pending(std::exception_ptr& first, std::size_t rotation) {
        const std::size_t n = slots_.size();
        if (n == 0) return;
        for (std::size_t k = 0, start = rotation % n; k < n; ++k) {
            const std::size_t i = (start + k) % n;
            if (slots_[i].el.pending()) done_ = true;
            body_ran_ |= run_pending(
                slots_[i].get(), slots_[i].el, [&] { invoke_body(body_, i, slots_[i].get()); },
                first);
        }
    }

    void unregister_all() {
        for (std::size_t i = 0; i < slots_.size(); ++i)
            slots_[i].el.unregister_from(slots_[i].get());
    }

    /// Dumps: "any of 3: channel remove 'a' (0x...), ..." (at most four
    /// named, then how many more).
    void describe(std::string& out) {
        out += "any of " + std::to_string(slots_.size()) + ": ";
        for (std::size_t i = 0; i < slots_.size() && i < 4; ++i) {
            if (i) out += ", ";
            describe_clause(out, slots_[i].get());
        }
        if (slots_.size() > 4) out += ", ...";
    }

private:
    std::size_t find(std::uintptr_t st) noexcept {
        for (std::size_t i = 0; i < slots_.size(); ++i)
            if (slots_[i].el.won(st)) return i;
        return slots_.size();
    }

    View view_;
    Proj proj_;
    Body body_;
    bool guard_ = true;
    bool done_ = false;
    bool body_ran_ = false;
    slot_buffer<slot, defaults::waituntil::waituntil_range_slots> slots_;
};

// ------------------------------------------------------------ inner nodes

/// `l | r` (And = false) or `l & r` (And = true).
template <class L, class R, bool And>
class junction {
public:
    static constexpr bool is_waituntil_tree = true;
    static constexpr std::size_t leaves = L::leaves + R::leaves;
    static constexpr bool has_and = And || L::has_and || R::has_and;
    static constexpr bool hinted = L::hinted || R::hinted;
    static constexpr bool all_hinted = L::all_hinted && R::all_hinted;
    static constexpr bool timed = L::timed || R::timed;

    /// Refers to both subtrees: they are temporaries of the same
    /// full-expression (the waituntil statement), so nothing is moved.
    junction(L& l, R& r) noexcept : l_(l), r_(r) {}
    // The compiler quotes these lines in its diagnostic: one line each.
    // clang-format off
    junction(const junction&) = delete;  // waituntil: a clause tree cannot be stored, copied or moved; write it inside the waituntil call
    junction(junction&&) = delete;  // waituntil: a clause tree cannot be stored, copied or moved; write it inside the waituntil call
    // clang-format on
    junction& operator=(junction&&) = delete;

    void add_guard(bool g) noexcept {
        l_.add_guard(g);
        r_.add_guard(g);
    }
    tri eval() const noexcept {
        if constexpr (And) return tri_and(l_.eval(), r_.eval());
        else return tri_or(l_.eval(), r_.eval());
    }
    /// Calls f(leaf, index) for each leaf in written order until f says stop.
    template <class F>
    bool visit(F& f, std::size_t& index) {
        return l_.visit(f, index) && r_.visit(f, index);
    }
    void prepare() {
        l_.prepare();
        r_.prepare();
    }

private:
    L& l_;
    R& r_;
};

/// `when(guard, subtree)`: refers to the subtree, which it disables unless
/// `guard` holds (the flag lives in the subtree's leaves).
template <class T>
class guarded {
public:
    static constexpr bool is_waituntil_tree = true;
    static constexpr std::size_t leaves = T::leaves;
    static constexpr bool has_and = T::has_and;
    static constexpr bool hinted = T::hinted;
    static constexpr bool all_hinted = T::all_hinted;
    static constexpr bool timed = T::timed;

    guarded(T& t, bool guard) noexcept : t_(t) { t_.add_guard(guard); }
    // The compiler quotes these lines in its diagnostic: one line each.
    // clang-format off
    guarded(const guarded&) = delete;  // waituntil: a clause tree cannot be stored, copied or moved; write it inside the waituntil call
    guarded(guarded&&) = delete;  // waituntil: a clause tree cannot be stored, copied or moved; write it inside the waituntil call
    // clang-format on
    guarded& operator=(guarded&&) = delete;

    void add_guard(bool g) noexcept { t_.add_guard(g); }
    tri eval() const noexcept { return t_.eval(); }
    template <class F>
    bool visit(F& f, std::size_t& index) {
        return t_.visit(f, index);
    }
    void prepare() { t_.prepare(); }

private:
    T& t_;
};

template <class T>
concept clause_tree = requires {
    std::remove_cvref_t<T>::is_waituntil_tree;
};

/// Every node type of a clause tree is neither copyable nor movable, and
/// every function taking a tree (`|`, `&`, `when`, `waituntil`) takes it by
/// value: only a prvalue (the tree written in place, initialising the
/// parameter directly) can be passed. A tree stored in a variable cannot be
/// passed anywhere, moved or not: it would refer to dead temporaries, and
/// its clauses' state is single-use. Inner nodes refer to these parameter
/// objects, which live until the end of the full-expression (the waituntil
/// call) under the Itanium C++ ABI that troupe's platforms use.
template <class T>
concept immovable_tree =
    clause_tree<T> && !std::is_move_constructible_v<T> && !std::is_copy_constructible_v<T>;

/// `otherwise(body)`, optionally guarded.
template <class Body>
class otherwise_clause {
public:
    explicit otherwise_clause(Body b) : body_(std::move(b)) {}
    otherwise_clause(otherwise_clause&&) = default;

    void add_guard(bool g) noexcept { guard_ = guard_ && g; }
    bool enabled() const noexcept { return guard_; }
    void run() { std::invoke(body_); }

private:
    Body body_;
    bool guard_ = true;
};

}  // namespace troupe::detail::wu
