#pragma once
// The two shapes of the waituntil algorithm (Cforall's, see
// docs/waituntil.md): exclusive (pure-or trees: one status word, exactly
// one body) and general (trees with `&`: a status per clause and a park
// counter; bodies run as their resources become available).
#include <atomic>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "troupe/context.hpp"
#include "troupe/defaults/waituntil.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/detail/waituntil_tree.hpp"
#include "troupe/error.hpp"
#include "troupe/thread.hpp"

namespace troupe {

/// What a waituntil statement did: which clauses' bodies ran (clauses are
/// numbered in written order from 0; a run-time-length clause counts as one)
/// and whether the otherwise clause ran.
template <std::size_t N>
class waituntil_result {
public:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    /// Whether the body of clause `i` ran.
    bool ran(std::size_t i) const noexcept { return i < N && ran_[i]; }
    /// Whether the otherwise clause ran.
    bool otherwise_ran() const noexcept { return otherwise_; }
    /// The first clause (in written order) whose body ran, or npos. For a
    /// pure-or statement: the one that ran.
    std::size_t index() const noexcept {
        for (std::size_t i = 0; i < N; ++i)
            if (ran_[i]) return i;
        return npos;
    }
    /// Number of clause bodies that ran (the otherwise not counted).
    std::size_t count() const noexcept { return ran_.count(); }
    /// True if nothing ran: every clause was disabled (or, rarely, a
    /// clause's resource skipped its body).
    bool none() const noexcept { return ran_.none() && !otherwise_; }
    /// All clause flags at once.
    const std::bitset<N>& clauses() const noexcept { return ran_; }

    void set(std::size_t i) noexcept { ran_.set(i); }
    void set_otherwise() noexcept { otherwise_ = true; }

private:
    std::bitset<N> ran_;
    bool otherwise_ = false;
};

namespace detail::wu {

/// Visits the leaves in written order starting at leaf `start` (wrapping
/// round): the rotation of the fair mode; start 0 is written order.
template <class Tree, class F>
bool visit_from(Tree& t, std::size_t start, F&& f) {
    std::size_t index = 0;
    auto first = [&](auto& leaf, std::size_t i) { return i < start || f(leaf, i); };
    if (!t.visit(first, index)) return false;
    if (start == 0) return true;
    index = 0;
    auto second = [&](auto& leaf, std::size_t i) { return i >= start || f(leaf, i); };
    return t.visit(second, index);
}

template <class Tree, class F>
void for_each_leaf(Tree& t, F&& f) {
    visit_from(t, 0, [&](auto& leaf, std::size_t i) {
        f(leaf, i);
        return true;
    });
}

/// Seals an exclusive statement's status word: CAS unsat -> sat, spinning
/// past `pending`. Returns the word's final value: `sat` if we sealed it
/// (from then on no resource can win any node of ours: try_claim fails on
/// anything but unsat), or the winning node's address if a resource won
/// first (its wake is then owed to us unless it won during registration).
inline std::uintptr_t seal(statement& s) noexcept {
    for (;;) {
        auto expected = unsat;
        // acq_rel: a resource that won before us published its operation.
        if (s.status.compare_exchange_strong(expected, sat, std::memory_order_acq_rel)) return sat;
        if (expected != pending) return expected;
        cpu_relax();  // a channel handshake on our word resolves in a few steps
    }
}

/// The otherwise clause's side of the race with the resources: it runs only
/// if it wins the status word (a resource that won first will unpark us).
inline bool claim_for_otherwise(statement& s) noexcept { return seal(s) == sat; }

/// Checked builds: reports a park() that ended without the wake the
/// statement waited for (a stray unpark); the statement parks again.
inline void report_stray_wake() {
    if constexpr (checked_build)
        report_misuse(
            "stray wake: a thread blocked in waituntil was unparked before any clause "
            "completed (troupe::unpark on a blocked thread?); it waits again");
}

/// Dumps (troupe/dump.hpp): a blocked statement's clauses, in written
/// order: "2 clause(s): blocking_lock 'a' (0x...), timeout (0x...)"; a
/// clause disabled by its guard is marked so. The resource is the statement,
/// whose `tree` the waiter set before parking.
template <class Tree>
struct clauses_info {
    static std::string details(const void* p) {
        std::string out = std::to_string(Tree::leaves) + " clause(s)";
        void* tree = static_cast<const statement*>(p)->tree;
        if (!tree) return out;
        out += ":";
        for_each_leaf(*static_cast<Tree*>(tree), [&](auto& leaf, std::size_t i) {
            out += i ? ", " : " ";
            leaf.describe(out);
            if (!leaf.enabled()) out += " (disabled)";
        });
        return out;
    }
    static constexpr wait_describer value{&details, nullptr, "held by"};
};

/// Exclusive mode: parks until a resource that won the statement made its
/// last touch of the winning node (select_node::released). A park that ends
/// earlier (a stray unpark) parks again: the winner's unpark is still owed.
inline void await_winner(statement& s, const wait_describer* d, bool timed) noexcept {
    wait_scope rec("waituntil", nullptr, &s, d);  // for dumps (troupe/dump.hpp)
    if (timed) stamp_wait(begin_wait_record());   // times_waits: why
    for (;;) {
        trace::note_park("waituntil");  // the execution trace's park reason
        park();
        const std::uintptr_t st = s.status.load(std::memory_order_acquire);
        // A won word holds the winning node's address (above every status
        // value); the node is ours, so reading it is safe.
        if (st > ran && reinterpret_cast<const select_node*>(st)->released()) return;
        report_stray_wake();
    }
}

/// Pure-or statement (Cforall's "special OR"). All clause nodes share one
/// status word; a resource wins it (CAS unsat -> &node) before it performs
/// its operation, so exactly one clause's operation happens.
///
/// Exceptions are caught as exception_ptr and the cleanup runs outside the
/// handler: the cleanup may park or yield, and a user thread resumed on
/// another kernel thread inside a handler would lose the handler's
/// exception state (it is per kernel thread in the C++ runtime).
template <class Tree, class Else>
waituntil_result<Tree::leaves> run_exclusive(Tree& t, Else* otherwise, std::size_t rotation) {
    waituntil_result<Tree::leaves> result;
    statement s{true};
    s.tree = &t;
    bool decided = false;  // the winner's (or otherwise's) body was started
    std::exception_ptr error;
    try {
        t.prepare();
        // Register in priority order; stop at an immediate win, or as soon
        // as a resource won us asynchronously (later clauses cannot win).
        // With ready hints, clauses that cannot complete now wait for a
        // second pass (see ready_hinted). If every clause has a hint, none
        // looked ready and an otherwise is enabled, the otherwise runs
        // without queueing anywhere (Go's select-with-default poll).
        bool immediate = false, won = false;
        const bool poll_only = Tree::all_hinted && otherwise && otherwise->enabled();
        for (int pass = 0; pass < (Tree::hinted ? 2 : 1) && !won; ++pass) {
            if (pass == 1 && poll_only && s.registrations == 0) break;
            visit_from(t, rotation % Tree::leaves, [&](auto& leaf, std::size_t) {
                if (!leaf.enabled()) return true;
                if (leaf.xregister(s, rotation, pass)) {
                    immediate = won = true;
                    return false;
                }
                won = s.status.load(std::memory_order_relaxed) != unsat;
                return !won;
            });
        }
        if (!immediate) {
            if (otherwise && otherwise->enabled() && claim_for_otherwise(s)) {
                for_each_leaf(t, [](auto& leaf, std::size_t) { leaf.unregister_all(); });
                decided = true;
                otherwise->run();
                result.set_otherwise();
                return result;
            }
            // exactly one resource won, and its wake() unparks us
            await_winner(s, &clauses_info<Tree>::value, Tree::timed);
            s.parked = true;
        }
        const std::uintptr_t st = s.status.load(std::memory_order_acquire);
        // Losers leave their queues first; the winner's node stays until its
        // body is over (a lock is held exactly while the body runs).
        for_each_leaf(t, [&](auto& leaf, std::size_t) { leaf.xunregister_losers(st); });
        decided = true;
        visit_from(t, 0, [&](auto& leaf, std::size_t i) {
            if (!leaf.xowns(st)) return true;
            if (leaf.xrun(st)) result.set(i);
            leaf.unregister_all();
            return false;
        });
        return result;
    } catch (...) {
        error = std::current_exception();
    }
    // Unwinding from a register, on_selected, body or otherwise: leave no
    // node behind. Seal the status first, so that the winner (if any) is
    // final before anything is unregistered: a partner can no longer win a
    // clause between our reading the status and our dequeuing the clause
    // (it would hand over an element nobody takes, and bank an unpark
    // nobody consumes). If a resource won us, its unpark is owed: consume
    // it (else a later park would return early); and its operation
    // happened: run its body rather than lose it (its exception, if any, is
    // dropped: the first one propagates).
    const std::uintptr_t st = seal(s);
    for_each_leaf(t, [&](auto& leaf, std::size_t) { leaf.xunregister_losers(st); });
    bool owed = false;
    for_each_leaf(t, [&](auto& leaf, std::size_t) { owed = owed || leaf.xowes_unpark(st); });
    if (owed && !s.parked) await_winner(s, &clauses_info<Tree>::value, Tree::timed);
    if (!decided) {
        for_each_leaf(t, [&](auto& leaf, std::size_t) {
            if (!leaf.xowns(st)) return;
            try {
                leaf.xrun(st);
            } catch (...) {}
        });
    }
    for_each_leaf(t, [](auto& leaf, std::size_t) { leaf.unregister_all(); });
    std::rethrow_exception(error);
}

/// Waiting for another thread that is a few instructions from done: spin
/// briefly, then yield (it may be a descheduled kernel thread).
inline void pause(int spins) noexcept {
    if (spins < defaults::waituntil::waituntil_drain_spins) cpu_relax();
    else yield_now();
}

/// General-mode cleanup: unregister what is left, wait until every resource
/// that completed one of our clauses has finished its wake() (it touches our
/// nodes and counter after releasing its lock), then run the bodies of
/// operations that completed but did not run yet (nothing is lost).
template <class Tree>
void finish_general(Tree& t, statement& s, std::size_t rotation, std::exception_ptr& first) {
    int owed = 0;
    for_each_leaf(t, [&](auto& leaf, std::size_t) {
        leaf.gunregister_rest();
        owed += leaf.gowed();
    });
    // Each owed wake adds 1 and each pass of ours took 1: the counter's final
    // value. A wake that leaves it non-zero does not unpark, so once it is
    // reached nobody will touch this statement again.
    const int final_count = owed - s.decrements;
    for (int spins = 0; s.counter.load(std::memory_order_acquire) != final_count; ++spins)
        pause(spins);
    // The wake that brought the counter to 0 unparks after its increment,
    // reading its node: wait for that last touch too (select_node::released)
    // before any node can go out of scope.
    for (int spins = 0;; ++spins) {
        bool settled = true;
        for_each_leaf(t, [&](auto& leaf, std::size_t) { settled = settled && leaf.gsettled(); });
        if (settled) break;
        pause(spins);
    }
    visit_from(t, rotation % Tree::leaves, [&](auto& leaf, std::size_t) {
        leaf.grun_pending(first, rotation);
        return true;
    });
}

/// Statement with `&` (Cforall's general shape): every clause has its own
/// status and the statement a park counter. Bodies run in check passes as
/// resources become available, until the predicate over "body ran" holds.
template <class Tree, class Else>
waituntil_result<Tree::leaves> run_general(Tree& t, Else* otherwise, std::size_t rotation) {
    waituntil_result<Tree::leaves> result;
    statement s{false};
    s.tree = &t;
    const std::size_t start = rotation % Tree::leaves;
    auto done = [&] { return t.eval() == tri::yes; };
    // A resource claims a node (status sat) before it completes the
    // operation (moves the element, assigns the lock) and calls wake() after.
    // So a claimed node is known complete only when its wake() is counted:
    // read the wakes so far, then the statuses; if every node seen claimed
    // is covered by a wake, all of them are complete (each wake follows its
    // own claim). Otherwise one is mid-operation: its wake() is coming.
    auto consistent_snapshot = [&] {
        const int woken = s.counter.load(std::memory_order_acquire) + s.decrements;
        int claimed = 0;
        for_each_leaf(t, [&](auto& leaf, std::size_t) { claimed += leaf.gsnapshot(); });
        return woken >= claimed;
    };
    auto run_ready = [&] {
        visit_from(t, start, [&](auto& leaf, std::size_t) {
            if (done()) return false;
            if (leaf.enabled()) leaf.gcheck(done, rotation);
            return true;
        });
    };
    std::exception_ptr error;  // caught, then handled outside the handler
    try {
        t.prepare();
        visit_from(t, start, [&](auto& leaf, std::size_t) {
            if (leaf.enabled()) leaf.gregister(s, rotation);
            return true;
        });
        if (otherwise && otherwise->enabled()) {
            // One pass over what is ready now; an operation caught between
            // its claim and its wake() is waited out (a few instructions).
            for (int spins = 0; !consistent_snapshot(); ++spins) pause(spins);
            run_ready();
            if (!done()) {
                otherwise->run();
                result.set_otherwise();
            }
        } else {
            for (;;) {
                if (consistent_snapshot()) run_ready();
                if (done()) break;
                // Park only if no availability is banked: a resource's wake()
                // adds 1 and unparks only when it brings -1 back to 0.
                ++s.decrements;
                if (s.counter.fetch_sub(1, std::memory_order_acq_rel) - 1 < 0) {
                    wait_scope rec("waituntil", nullptr, &s, &clauses_info<Tree>::value);
                    if constexpr (Tree::timed) stamp_wait(begin_wait_record());
                    trace::note_park("waituntil");
                    park();
                    // The wake that unparks us first brings the counter back
                    // to 0; a park that ends before (a stray unpark) must not
                    // start another pass (it would decrement again and miss
                    // that wake's unpark): park again.
                    while (s.counter.load(std::memory_order_acquire) < 0) {
                        report_stray_wake();
                        park();
                    }
                }
            }
        }
    } catch (...) {
        error = std::current_exception();
    }
    std::exception_ptr first;
    finish_general(t, s, rotation, first);
    if (error) std::rethrow_exception(error);  // a pending body's exception is dropped
    if (first) std::rethrow_exception(first);
    for_each_leaf(t, [&](auto& leaf, std::size_t i) {
        if (leaf.body_ran()) result.set(i);
    });
    return result;
}

template <class Tree, class Else>
waituntil_result<Tree::leaves> run_statement(Tree& t, Else* otherwise, std::size_t rotation) {
    // Every clause disabled: the statement does nothing (not even otherwise).
    if (t.eval() == tri::absent) return {};
    if constexpr (Tree::has_and) return run_general(t, otherwise, rotation);
    else return run_exclusive(t, otherwise, rotation);
}

}  // namespace detail::wu
}  // namespace troupe
