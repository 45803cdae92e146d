#pragma once
// Internal (core's processors and the actor executor's workers): a group of
// kernel threads that sleep when they have nothing to do.
//
//     // a member with nothing to do:          // a publisher of work:
//     g.start_spinning(m);                     // seq_cst RMW publishing it
//     if (poll_for_work()) g.stop_spinning(m); g.wake_one();
//     else {
//         g.announce_idle(m);
//         const bool found = look_for_work();  // the re-check
//         if (!found) g.sleep(m);
//         g.withdraw(m);                       // true: woken as a spinner
//         if (found) g.stop_spinning(m);       // passes the duty on
//     }
//
// The one idle protocol of troupe: spin (counted), announce, re-check, sleep
// on the member's futex word, withdraw. Wakers either wake a given member
// (wake) or apply the wake rule (wake_one: wake one sleeper as a spinner if
// nobody spins). The invariant that keeps published work from being left
// with every member asleep is written once, in idle_group.cpp above
// wake_one; docs/scheduler.md ("The wake rule", "The idle group") is the
// specification. Every atomic is private: the operations below are the
// only way to touch it.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "troupe/context.hpp"

namespace troupe::detail {

class idle_group {
public:
    /// One kernel thread of the group: its futex word and whether it is
    /// counted as a spinner. Embedded in the thread's own object (processor,
    /// worker); operations taking a `member&` to change its state are called
    /// by that member's own thread, except wake().
    class alignas(64) member {
    public:
        member() = default;
        member(const member&) = delete;
        member& operator=(const member&) = delete;
        /// Its position in the group (order of add_member).
        std::size_t index() const noexcept { return index_; }

    private:
        friend class idle_group;
        // awake -> asleep: the member (announce_idle). asleep -> dormant:
        // the member, past its re-check (sleep). asleep or dormant -> awake
        // or woken_spinning: a waker (CAS, then futex wake). dormant -> lent
        // -> held -> lent -> dormant: a lender (take, hold, resume,
        // give_back); held -> awake: retake. Anything -> awake: the member
        // (withdraw, exchange), only after sleep returned or instead of it.
        std::atomic<std::uint32_t> word_{0};
        bool counted_ = false;  // in spinners_ (own thread only)
        // Dropped its spinner count in announce_idle and has not slept or
        // spun since: if its re-check finds work, it passes the duty on.
        bool owes_ = false;
        std::size_t index_ = 0;
        // A member that is a user thread sleeps by parking it (bind_context);
        // nullptr: a kernel thread sleeping on word_'s futex.
        context* ctx_ = nullptr;
        bool slept_ = false;  // a user-thread member parked since it announced
        // Its thread sleeps in timed looks at a lent or held slot (sleep()
        // with held_look): written by it, read by nudge().
        std::atomic<bool> looking_{false};
    };

    /// What a spinner count promises. `finds_work`: spinners carry the duty
    /// to find published work (Go's rule; processors): the last spinner to
    /// stop runs the wake rule. `hint`: the count is only a hint for
    /// policies (actor workers, whose senders wake a mailbox's owner).
    enum class spinner_duty : std::uint8_t { finds_work, hint };
    /// How wake() leaves the member: `spinner` adds one to the spinner count
    /// on its behalf (the member inherits it), `plain` does not.
    enum class wake_as : std::uint8_t { plain, spinner };
    /// sleep_until(): `watching` counts the member as a watcher while it
    /// sleeps (wake_one_unless_watched wakes no one while a watcher sleeps).
    enum class sleep_kind : std::uint8_t { plain, watching };

    /// A group of at most `capacity` members. Throws std::bad_alloc (then
    /// nothing was made).
    idle_group(std::size_t capacity, spinner_duty duty);
    idle_group(const idle_group&) = delete;
    idle_group& operator=(const idle_group&) = delete;

    // ------------------------------------------------------------ membership
    /// Appends `m` (index = current size). Membership changes are serialised
    /// by the caller; a member is added after its thread may already run
    /// (until then wake_one cannot find it and retries). Nothrow.
    void add_member(member& m) noexcept;
    /// Removes the last member (it stays counted until it withdraws). Nothrow.
    void remove_last_member() noexcept;
    std::size_t size() const noexcept { return size_.load(std::memory_order_acquire); }

    /// Makes `m` a user-thread member: sleep() parks `c` (troupe's
    /// park/unpark, so its processor runs other threads) instead of
    /// blocking the kernel thread on a futex, and a waker unparks it. Call
    /// before `m` first announces itself; `c` must be the context that then
    /// calls the member's operations (sleep_until then parks it with a timer as
    /// one more waker). Nothrow.
    static void bind_context(member& m, context& c) noexcept { m.ctx_ = &c; }

    // ------------------------------------------------------------ the member's side
    /// Counts `m` as a spinner (no-op if it already is, e.g. woken as one).
    /// Nothrow, never blocks.
    void start_spinning(member& m) noexcept {
        m.owes_ = false;  // the count carries the duty from here on
        if (!m.counted_) count_spinner(m);
    }
    /// `m` found work (call it whenever it does; a no-op unless it holds a
    /// spinner count or owes the duty). With `finds_work`, the last spinner
    /// to stop runs wake_one (Go's resetspinning): work made ready while it
    /// was counted relied on it, and it takes only one piece. The same holds
    /// for a member whose re-check after announce_idle found work, if it
    /// dropped a spinner count there (Go's findrunnable re-check). Nothrow;
    /// may wake one member.
    void stop_spinning(member& m) noexcept {
        if (m.counted_ || m.owes_) drop_spinner(m);
    }
    /// Announces `m` idle: sleepers += 1, its word = asleep, then its
    /// spinner count (if any) is dropped, all seq_cst. The caller must then
    /// look for work once more before sleep(), withdraw() either way, and
    /// call stop_spinning() if the re-check found work. Nothrow.
    void announce_idle(member& m) noexcept;
    /// Blocks the calling kernel thread on `m`'s futex word until a waker
    /// wakes it (spurious futex returns sleep again). After announce_idle
    /// and a re-check that found nothing, by `m`'s own thread: the member
    /// is dormant from here (a lender may take its slot: take) and keeps
    /// sleeping while the slot is lent or held. Returns true when woken
    /// (also at once if a waker came first). With a nonzero `held_look`, a
    /// kernel-thread member whose slot is lent or held wakes after that
    /// long and returns false if the slot is held then (still announced and
    /// counted as looking: call sleep() again with a nonzero held_look, or
    /// retake() the slot). Nothrow.
    bool sleep(member& m, std::chrono::nanoseconds held_look = {}) noexcept;
    /// As sleep(), but returns at `deadline` (steady clock) at the latest:
    /// true if woken, false if the time ran out. `watching` counts `m` as a
    /// watcher while it sleeps. Nothrow.
    bool sleep_until(member& m, std::chrono::steady_clock::time_point deadline,
                     sleep_kind kind = sleep_kind::plain) noexcept;
    /// Ends an announcement (after sleeping or instead of it): word = awake,
    /// sleepers -= 1. True if a waker woke `m` as a spinner: `m` is counted
    /// now (stop_spinning drops it; start_spinning keeps it). Nothrow.
    bool withdraw(member& m) noexcept;

    // ------------------------------------------------------------ wakers
    /// Wakes `m` if it is announced asleep; true if this call woke it (a
    /// concurrent waker may have). With `spinner` the count is added before
    /// the CAS (never below the truth) and undone if the CAS fails. Nothrow.
    bool wake(member& m, wake_as how) noexcept;
    /// The wake rule, after work was published with a seq_cst RMW: if some
    /// member is announced asleep and none spins, wake one as a spinner.
    /// Retries (pausing, then yielding the CPU) while every announced
    /// sleeper is out of reach (just woken by someone else, or not yet a
    /// member): never blocks on a sleeper. Nothrow.
    void wake_one() noexcept { apply_rule(false); }
    /// The same rule, for work that a watcher will come back for (a
    /// hand-off): a sleeping watcher also suffices. Nothrow.
    void wake_one_unless_watched() noexcept { apply_rule(true); }
    /// Wakes one member announced asleep other than `self`, scanning from
    /// the one after it (plain, not the rule: no count is consulted).
    /// True if one was woken. Nothrow.
    bool wake_another(const member& self) noexcept;

    // ------------------------------------------------------------ lending a member's slot
    // A kernel-thread member asleep past its re-check (dormant) may have
    // its slot taken by another kernel thread (core's lend_while_blocked:
    // an OS thread runs the processor's user threads in its place, as Go's
    // M takes a P). While the slot is lent or held the member's own thread
    // stays asleep on its word (no waker can wake it: wake() fails), and
    // the member counts as neither asleep nor spinning: for the wake rule
    // it is busy. The lender runs the member's side of the protocol in its
    // place; the member's own fields are the lender's until it gives the
    // slot back.

    /// Takes a dormant member's slot: true if it was dormant (sleepers -=
    /// 1: it is busy now). By the lender; nothrow.
    bool take(member& m) noexcept;
    /// The lender stops running the slot but keeps it (it returns to its
    /// own code between waits): lent -> held. Nothrow.
    void hold(member& m) noexcept;
    /// The lender runs the slot again: held -> lent; false if it was
    /// retaken meanwhile. Nothrow.
    bool resume(member& m) noexcept;
    /// The lender gives a lent slot back: sleepers += 1, then word =
    /// dormant (both seq_cst, as announce_idle). The caller must then
    /// re-check the work that relied on the slot being busy (its queue)
    /// and wake the member if there is some. Nothrow.
    void give_back(member& m) noexcept;
    /// Anyone: wakes the member's own thread out of a held slot (held ->
    /// awake, plain), for work only that thread may do (retiring). True if
    /// this call took it back. Nothrow.
    bool retake(member& m) noexcept;
    /// Work was queued on `m`'s lent or held slot: if its thread is not
    /// already looking at the slot now and then (sleep() with held_look),
    /// wake it so that it starts to (it sleeps on, timed). Anyone; nothrow.
    void nudge(member& m) noexcept;
    /// `m`'s slot is lent or held (a snapshot).
    bool lent(const member& m) const noexcept {
        const std::uint32_t w = m.word_.load(std::memory_order_seq_cst);
        return w == lent_ || w == held_;
    }
    /// `m` sleeps past its re-check: take() would succeed now (a snapshot).
    bool dormant(const member& m) const noexcept {
        return m.word_.load(std::memory_order_seq_cst) == dormant_;
    }

    // ------------------------------------------------------------ observers
    /// Some member is announced idle (seq_cst load: a Dekker partner of
    /// announce_idle for callers that published work before it).
    bool any_sleeping() const noexcept { return sleepers_.load(std::memory_order_seq_cst) != 0; }
    /// Some member is counted as a spinner (seq_cst load).
    bool any_spinning() const noexcept { return spinners_.load(std::memory_order_seq_cst) != 0; }
    int sleepers() const noexcept { return sleepers_.load(std::memory_order_seq_cst); }
    int spinners() const noexcept { return spinners_.load(std::memory_order_seq_cst); }
    int watchers() const noexcept { return watchers_.load(std::memory_order_seq_cst); }
    /// `m` is announced asleep and no waker has woken it yet (its slot is
    /// not lent).
    bool asleep(const member& m) const noexcept {
        const std::uint32_t w = m.word_.load(std::memory_order_seq_cst);
        return w == asleep_ || w == dormant_;
    }
    /// How many members are asleep (a snapshot).
    std::size_t members_asleep() const noexcept;

private:
    // dormant: asleep past the re-check (only then may a lender take the
    // slot: the member touches none of its fields until woken). lent: a
    // lender runs the slot; held: a lender keeps it between its waits.
    enum : std::uint32_t {
        awake_ = 0,
        asleep_ = 1,
        woken_spinning_ = 2,
        dormant_ = 3,
        lent_ = 4,
        held_ = 5
    };

    void count_spinner(member& m) noexcept;
    void drop_spinner(member& m) noexcept;
    void apply_rule(bool watched_suffices) noexcept;
    bool wake_from(std::size_t first, std::size_t count, wake_as how) noexcept;
    bool park_context_until(member& m, std::chrono::steady_clock::time_point deadline) noexcept;

    const spinner_duty duty_;
    const std::size_t capacity_;
    std::unique_ptr<std::atomic<member*>[]> members_;
    std::atomic<std::size_t> size_{0};
    // Members announced idle (asleep or about to be) / spinning or woken as
    // spinners / sleeping as watchers. See wake_one in idle_group.cpp.
    alignas(64) std::atomic<int> sleepers_{0};
    std::atomic<int> spinners_{0};
    std::atomic<int> watchers_{0};
};

}  // namespace troupe::detail
