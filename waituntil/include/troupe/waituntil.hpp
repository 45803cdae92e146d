#pragma once
/// waituntil: wait for any combination of locks, channel operations,
/// futures, timeouts — anything `troupe::selectable` — in one statement.
///
///     using namespace std::chrono_literals;
///     int v;
///     auto r = troupe::waituntil(
///           troupe::on(lock, [&] { /* holds lock */ })
///         | (troupe::when(i == 0, troupe::on(ch.remove_into(v), [&] { use(v); }))
///              & troupe::on(fut, [&] { use(fut.get()); }))
///         | troupe::on(troupe::timeout(1s), [&] { late(); }),
///           troupe::otherwise([&] { nothing_ready(); }));
///     if (r.ran(3)) ...;                      // which clause(s) ran
///
/// Clauses: `on(resource, body)` (body optional) for any selectable
/// resource: blocking_lock, owner_lock, semaphore, future<T>, timeout(d),
/// channel clauses (`ch.remove_into(v)`, `ch.remove_discard()`,
/// `ch.insert_from(v)`) and user types meeting the concept. `on_any(range,
/// body(index))` waits on a run-time-length range (a span of futures, or of
/// channels through a projection: `on_any(chans, [&](auto& c) { return
/// c.remove_into(v); }, body)`); it counts as one clause, and the body gets
/// the index of the element that was ready.
///
/// Operators: `|` (or) and `&` (and), `&` binding tighter (as in C++:
/// GCC's -Wparentheses asks for the parentheses anyway, which read better),
/// parentheses group. `when(guard, clause-or-subtree)` disables clauses (a
/// disabled clause is true under `&`, false under `|`; a subtree with every
/// clause disabled drops out). `otherwise(body)` (guardable) runs if nothing
/// is ready when every clause has registered. If every clause is disabled
/// the statement does nothing, not even the otherwise.
///
/// Semantics (Cforall's): every target expression and guard is evaluated
/// exactly once, before any registration (in unspecified order between
/// clauses, as for any C++ operands). Bodies run as their resources become
/// available; the statement ends when the predicate over "body ran" holds.
///  - Pure-or statements: exactly one body (or the otherwise) runs, and only
///    the winning clause's operation happens (the resource wins the
///    statement before it moves data or hands over a lock). When several are
///    ready, the first in written order wins, unless a `rotation` is passed
///    (fair mode: the starting clause rotates from call to call).
///  - Statements with `&`: several bodies may run (in `(a | b) & c` both a
///    and b may). An operation that completed is never lost: its body runs,
///    during cleanup if needed, also while the statement unwinds from an
///    exception (such a body's own exception is then dropped; outside
///    unwinding the first one propagates after every pending body ran).
///  - A body runs only once its clause's operation is done and visible: a
///    future clause's body sees `available()`, a lock clause's body holds
///    the lock (`owned_by_caller()`), a semaphore clause's body sees the
///    count its release left, a channel clause's body has the element (or,
///    with `report_close`, sees `is_closed()`). Every resource publishes its
///    new state before it wakes a waituntil waiter (docs/locks.md).
///  - A lock clause holds the lock exactly while its body runs.
///  - A closed channel makes its clause ready; the clause then throws as the
///    plain operation would, unless it is a `report_close` clause, whose
///    body runs and may take the outcome (a channel_status) instead:
///
///        // Go                               // troupe
///        for a != nil || b != nil {          bool a_open = true, b_open = true;
///          select {                          while (a_open || b_open)
///          case v, ok := <-a:                  troupe::waituntil(
///            if !ok { a = nil; break }           troupe::when(a_open, troupe::on(
///            use(v)                                a.remove_into(v, troupe::report_close),
///          case v, ok := <-b:                      [&](troupe::channel_status s) {
///            if !ok { b = nil; break }               if (s == troupe::channel_status::closed)
///            use(v)                                    a_open = false;   // Go: a = nil
///          }                                       else use(v); }))
///        }                                     | troupe::when(b_open, ... same for b ...));
///
///    A closed channel stays ready (as in Go), so the loop disables its
///    clause with `when` once it saw `closed`; a statement whose clauses are
///    all disabled does nothing. Bodies that take no argument are accepted
///    too. A body may take the outcome of any resource offering
///    `select_outcome()`; an `on_any` body may take (index, outcome).
///
/// Blocking: parks the calling context (user thread or OS thread) until the
/// statement is satisfied. Cost: one select node per clause, inside the
/// clause objects on the caller's stack; no heap allocation (a
/// run-time-length clause longer than defaults::waituntil::waituntil_range_slots
/// allocates its nodes once). Resources may offer a lock-free
/// `select_ready_hint()` (see detail::wu::ready_hinted) so that a pure-or
/// statement skips queueing on clauses that cannot complete now.
///
/// Lifetime: `|`, `&` and `when` do not copy clauses; the tree refers to
/// the temporaries it is built from, which live until the end of the full
/// expression. Write the whole tree inside the waituntil call. Clause trees
/// can be neither copied nor moved, and every function taking one takes it
/// by value, so a tree stored in a variable cannot be passed anywhere, with
/// or without std::move (a compile error naming this rule); nor can a tree
/// be forwarded through a helper function.
///
/// Exceptions (what a statement guarantees when one passes through it):
///  - from a registration (a resource's register_select, e.g. a timeout's
///    timer allocation), an on_selected (a closed channel) or a body: every
///    node is unregistered before the exception leaves, nothing stays queued
///    and no wake is left banked. Pure-or: if a resource won a clause before
///    the failure, that clause's operation happened, so its body runs first
///    (an exception from that body is dropped), then the original exception
///    propagates; otherwise no operation happened (strong for the
///    resources: a partner's element stays in its channel). With `&`: bodies
///    of operations that completed run during cleanup (their exceptions are
///    dropped; the first exception propagates). Basic guarantee overall:
///    bodies that ran had their effects.
///  - A resource's register_select must not throw after it won the node.
#include <atomic>
#include <cstddef>
#include <ranges>
#include <type_traits>
#include <utility>

#include "troupe/detail/waituntil_statement.hpp"
#include "troupe/detail/waituntil_tree.hpp"
#include "troupe/select.hpp"
#include "troupe/timeout.hpp"

namespace troupe {

/// Fair mode state for one waituntil call site (a server loop): each
/// statement given it starts at the next clause in turn, so written-order
/// priority cannot starve a clause. Thread-safe.
class rotation {
public:
    /// The starting offset for the next statement.
    std::size_t advance() noexcept { return next_.fetch_add(1, std::memory_order_relaxed); }

private:
    std::atomic<std::size_t> next_{0};
};

/// A clause over one selectable resource. An lvalue resource is referred to
/// (it must outlive the statement, as it naturally does); a temporary is
/// owned by the clause: channel clause objects are moved in, and
/// `timeout(d)` gets a fresh timeout of the same duration (timeouts cannot
/// move). The body is optional.
template <class R, class Body = detail::wu::no_body>
requires selectable<std::remove_cvref_t<R>> &&
    (!std::is_const_v<std::remove_reference_t<R>>)&&detail::wu::clause_body<
        Body, std::remove_cvref_t<R>> [[nodiscard]] auto on(R&& resource, Body&& body = {}) {
    using res = std::remove_cvref_t<R>;
    using body_t = std::decay_t<Body>;
    if constexpr (std::is_lvalue_reference_v<R>) {
        return detail::wu::clause<detail::wu::ref_holder<res>, body_t>{resource,
                                                                       std::forward<Body>(body)};
    } else if constexpr (std::is_same_v<res, timeout>) {
        return detail::wu::clause<detail::wu::timeout_holder, body_t>{resource,
                                                                      std::forward<Body>(body)};
    } else {
        static_assert(std::is_move_constructible_v<res>,
                      "troupe::on: a temporary resource must be movable (pass an lvalue instead)");
        return detail::wu::clause<detail::wu::value_holder<res>, body_t>{std::move(resource),
                                                                         std::forward<Body>(body)};
    }
}

/// A clause over a run-time-length range of resources (Go needs reflection
/// for this): ready as soon as one element is; `body(index)` (or `body()`)
/// runs for the element that was ready. Elements are tried in order (or from
/// the rotation's start). An empty range is a disabled clause.
template <class Range, class Body = detail::wu::no_body>
requires std::ranges::random_access_range<Range> && std::ranges::sized_range<Range> &&
    std::ranges::viewable_range<Range>
[[nodiscard]] auto on_any(Range&& range, Body&& body = {}) {
    using view = std::views::all_t<Range>;
    return detail::wu::range_clause<view, detail::wu::identity_projection, std::decay_t<Body>>{
        std::views::all(std::forward<Range>(range)), {}, std::forward<Body>(body)};
}

/// As on_any(range, body), waiting on `projection(element)` for each
/// element: e.g. `[&](channel<int>& c) { return c.remove_into(v); }`. The
/// projection runs once per element before anything registers.
template <class Range, class Projection, class Body>
requires std::ranges::random_access_range<Range> && std::ranges::sized_range<Range> &&
    std::ranges::viewable_range<Range> && std::is_invocable_v < std::decay_t<Projection>
&, std::ranges::range_reference_t < Range >>
       [[nodiscard]] auto on_any(Range&& range, Projection&& projection, Body&& body) {
    using view = std::views::all_t<Range>;
    return detail::wu::range_clause<view, std::decay_t<Projection>, std::decay_t<Body>>{
        std::views::all(std::forward<Range>(range)), std::forward<Projection>(projection),
        std::forward<Body>(body)};
}

/// Disables a clause, or every clause of a subtree, unless `guard` holds.
template <detail::wu::immovable_tree Tree>
[[nodiscard]] detail::wu::guarded<Tree> when(bool guard, Tree tree) noexcept {
    return {tree, guard};
}

/// The clause that runs when nothing is ready once every clause registered.
template <class Body>
requires std::is_invocable_v < std::decay_t<Body>
& > [[nodiscard]] auto otherwise(Body&& body) {
    return detail::wu::otherwise_clause<std::decay_t<Body>>{std::forward<Body>(body)};
}

/// A guarded otherwise.
template <class Body>
[[nodiscard]] detail::wu::otherwise_clause<Body> when(bool guard,
                                                      detail::wu::otherwise_clause<Body> e) {
    e.add_guard(guard);
    return e;
}

namespace detail::wu {
// Found by argument-dependent lookup on clause trees only.
// Trees are taken by value (see immovable_tree): only a tree written in
// place can be passed.
template <immovable_tree L, immovable_tree R>
[[nodiscard]] junction<L, R, false> operator|(L l, R r) noexcept {
    return {l, r};
}
template <immovable_tree L, immovable_tree R>
[[nodiscard]] junction<L, R, true> operator&(L l, R r) noexcept {
    return {l, r};
}
}  // namespace detail::wu

/// Runs the statement over `tree` (see the header comment); returns which
/// clauses ran. Blocks until the statement's predicate holds (parks; a
/// stray unpark does not end the wait). Throws what a body, a registration,
/// or a clause's resource (a closed channel) throws, with the guarantee in
/// the header comment.
template <detail::wu::immovable_tree Tree>
auto waituntil(Tree tree) {
    return detail::wu::run_statement(
        tree, static_cast<detail::wu::otherwise_clause<detail::wu::no_body>*>(nullptr), 0);
}

/// As waituntil(tree), running `e` instead of blocking when nothing is
/// ready at registration (if `e` is enabled).
template <detail::wu::immovable_tree Tree, class Else>
auto waituntil(Tree tree, detail::wu::otherwise_clause<Else> e) {
    return detail::wu::run_statement(tree, &e, 0);
}

/// Fair mode: as waituntil(tree), trying clauses (and the elements of
/// run-time-length clauses) from `r`'s next starting point instead of in
/// written order.
template <detail::wu::immovable_tree Tree>
auto waituntil(rotation& r, Tree tree) {
    return detail::wu::run_statement(
        tree, static_cast<detail::wu::otherwise_clause<detail::wu::no_body>*>(nullptr),
        r.advance());
}

/// Fair mode with an otherwise clause.
template <detail::wu::immovable_tree Tree, class Else>
auto waituntil(rotation& r, Tree tree, detail::wu::otherwise_clause<Else> e) {
    return detail::wu::run_statement(tree, &e, r.advance());
}

}  // namespace troupe
