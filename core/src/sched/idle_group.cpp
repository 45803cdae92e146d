// The idle group: the one parking primitive of processors and actor
// workers (see troupe/detail/idle_group.hpp and docs/scheduler.md).
#include "troupe/detail/idle_group.hpp"
#include "troupe/detail/trace.hpp"

#include <thread>

#include "troupe/detail/futex.hpp"
#include "troupe/detail/timer.hpp"

namespace troupe::detail {

idle_group::idle_group(std::size_t capacity, spinner_duty duty)
    : duty_(duty), capacity_(capacity), members_(new std::atomic<member*>[capacity]) {
    for (std::size_t i = 0; i < capacity_; ++i)
        members_[i].store(nullptr, std::memory_order_relaxed);
}

void idle_group::add_member(member& m) noexcept {
    const std::size_t i = size_.load(std::memory_order_relaxed);
    if (i >= capacity_) return;  // callers size the group; never reached
    m.index_ = i;
    // release (both): a waker that reads the new size sees the member.
    members_[i].store(&m, std::memory_order_release);
    size_.store(i + 1, std::memory_order_release);
}

void idle_group::remove_last_member() noexcept {
    const std::size_t n = size_.load(std::memory_order_relaxed);
    if (n == 0) return;
    // Shrink the range first, then clear the entry: a waker that read the
    // old size finds null (skips it) or the member (still a valid object).
    size_.store(n - 1, std::memory_order_seq_cst);
    members_[n - 1].store(nullptr, std::memory_order_release);
}

std::size_t idle_group::members_asleep() const noexcept {
    std::size_t k = 0;
    const std::size_t n = size();
    for (std::size_t i = 0; i < n; ++i)
        if (const member* m = members_[i].load(std::memory_order_acquire); m && asleep(*m)) ++k;
    return k;
}

// ---------------------------------------------------------------- the member's side

void idle_group::count_spinner(member& m) noexcept {
    // seq_cst: while we are counted the rule wakes no one for published
    // work; we look for it (our polls come after this increment).
    spinners_.fetch_add(1, std::memory_order_seq_cst);
    m.counted_ = true;
}

void idle_group::drop_spinner(member& m) noexcept {
    if (!m.counted_) {
        // Owed: we dropped our count in announce_idle and our re-check
        // found work. Publishers that saw our count woke no one for work
        // we take only one piece of: run the rule for the rest (it wakes
        // no one if another spinner carries the duty).
        m.owes_ = false;
        if (duty_ == spinner_duty::finds_work) wake_one();
        return;
    }
    m.counted_ = false;
    // seq_cst: if we were the last spinner, work published while we were
    // counted saw spinners != 0 and woke no one; the rule, run again after
    // our drop, either sees another spinner or a sleeper to wake.
    if (spinners_.fetch_sub(1, std::memory_order_seq_cst) == 1 && duty_ == spinner_duty::finds_work)
        wake_one();
}

void idle_group::announce_idle(member& m) noexcept {
    // Order (all seq_cst): sleepers is raised before the spinner count is
    // dropped, so the member is never counted as neither; the word is set
    // before the drop, so a waker that sees spinners == 0 can find it
    // asleep. The caller's re-check of its work comes after all three.
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    m.word_.store(asleep_, std::memory_order_seq_cst);
    if (m.counted_) {
        m.counted_ = false;
        // No pass-on here: our re-check follows. If it finds work we owe
        // the rule a run (stop_spinning), as we take only one piece.
        m.owes_ = true;
        spinners_.fetch_sub(1, std::memory_order_seq_cst);
    }
}

bool idle_group::sleep(member& m, std::chrono::nanoseconds held_look) noexcept {
    m.owes_ = false;  // the re-check found nothing: the duty is discharged
    if (m.ctx_) {
        // A user-thread member: exactly one unpark comes, from the waker
        // whose CAS took the word off asleep (wake()); a wake that came
        // before this park is banked in the permit. park() never returns
        // spuriously, so the word is no longer asleep afterwards.
        trace::note_park("idle");
        park();
        m.slept_ = true;
        return true;
    }
    const std::uint64_t trace_t0 = trace::on() ? trace::now() : 0;
    // Past the re-check: dormant, so a lender may take the slot (take()
    // requires dormant, so it never runs the slot while the member still
    // looks for work itself). seq_cst CAS: fails only if a waker came
    // first (the word is awake or woken_spinning), then there is no sleep.
    std::uint32_t w = asleep_;
    if (m.word_.compare_exchange_strong(w, dormant_, std::memory_order_seq_cst)) w = dormant_;
    // Only a waker (or retake) ends dormant/lent/held with awake or
    // woken_spinning; a lender moves it among the three. A spurious futex
    // return, or one for a lender's move, sleeps again.
    while (w == dormant_ || w == lent_ || w == held_) {
        if (w != dormant_ && held_look.count() > 0) {
            // Lent or held (a lender's take and hold wake nobody; a nudge
            // did, or the word changed before we slept): look at the slot
            // every held_look from now on. Held at a look: the caller
            // decides whether to retake. seq_cst store: a nudger that
            // queued work and then reads `looking` false wakes us; one that
            // reads true leaves it to our next look, which reads the queue
            // after this store.
            m.looking_.store(true, std::memory_order_seq_cst);
            const auto deadline = std::chrono::steady_clock::now() + held_look;
            futex_wait_until(m.word_, w, deadline);
            w = m.word_.load(std::memory_order_seq_cst);
            if (w == held_ && std::chrono::steady_clock::now() >= deadline) {
                // Still `looking`: the caller looks at the queue now and
                // either retakes the slot or sleeps again, timed (a nudge
                // meanwhile needs no wake).
                if (trace_t0) [[unlikely]]
                    trace::idle(&m, trace_t0);
                return false;
            }
            continue;
        }
        // Untimed (dormant, or no looks): not looking any more. seq_cst,
        // before the futex compares the word: a nudger that still read
        // `looking` saw the word lent or held after a take, so the futex
        // finds it changed from dormant and we come back to look.
        if (m.looking_.load(std::memory_order_relaxed))
            m.looking_.store(false, std::memory_order_seq_cst);
        futex_wait(m.word_, w);
        w = m.word_.load(std::memory_order_seq_cst);
    }
    // Awake: we run the slot ourselves (any work queued there is ours now).
    m.looking_.store(false, std::memory_order_relaxed);
    if (trace_t0) [[unlikely]]
        trace::idle(&m, trace_t0);
    return true;
}

bool idle_group::sleep_until(member& m, std::chrono::steady_clock::time_point deadline,
                             sleep_kind kind) noexcept {
    m.owes_ = false;  // as in sleep()
    const bool watching = kind == sleep_kind::watching;
    if (watching) watchers_.fetch_add(1, std::memory_order_seq_cst);
    if (m.ctx_) {
        const bool woken = park_context_until(m, deadline);
        if (watching) watchers_.fetch_sub(1, std::memory_order_seq_cst);
        return woken;
    }
    const std::uint64_t trace_t0 = trace::on() ? trace::now() : 0;
    // A timed sleep stays asleep (never dormant): its thread returns by
    // itself at the deadline, so no lender may take its slot.
    while (m.word_.load(std::memory_order_seq_cst) == asleep_ &&
           std::chrono::steady_clock::now() < deadline)
        futex_wait_until(m.word_, asleep_, deadline);
    if (trace_t0) [[unlikely]]
        trace::idle(&m, trace_t0);
    if (watching) watchers_.fetch_sub(1, std::memory_order_seq_cst);
    return m.word_.load(std::memory_order_seq_cst) != asleep_;
}

// A user-thread member's timed sleep: the timer is one more waker (its
// callback is wake(m, plain)), so exactly one unpark still comes, from
// whichever CAS takes the word off asleep first.
bool idle_group::park_context_until(member& m,
                                    std::chrono::steady_clock::time_point deadline) noexcept {
    struct timed_wake {
        idle_group* group;
        member* who;
        bool timer_won = false;  // written by the callback, read after timer_cancel
    } w{this, &m};
    timer_node t;
    t.deadline = deadline;
    t.arg = &w;
    t.fire = [](timer_node& n) noexcept {
        auto* tw = static_cast<timed_wake*>(n.arg);
        // The flag first: once wake() unparks the member, it may cancel the
        // timer (which waits for this callback to return) and read it.
        tw->timer_won = true;
        if (!tw->group->wake(*tw->who, wake_as::plain)) tw->timer_won = false;
    };
    try {
        timer_arm(t);
    } catch (...) {
        return false;  // no timer (allocation failure): report a timeout at once
    }
    trace::note_park("idle");
    park();  // the one unpark: a waker's or the timer's
    m.slept_ = true;
    timer_cancel(t);  // waits out a running callback: timer_won is final
    return !w.timer_won;
}

bool idle_group::withdraw(member& m) noexcept {
    // The exchange tells whether a waker gave us a spinner count (only a
    // waker writes woken_spinning, and only over asleep or dormant).
    const std::uint32_t was = m.word_.exchange(awake_, std::memory_order_seq_cst);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    if (m.ctx_) {
        // A user-thread member that did not sleep but was woken (its waker
        // won the CAS before our exchange) still gets that waker's one
        // unpark: take it now, so no stray permit outlives the
        // announcement (the next park of this thread waits for its own).
        if (!m.slept_ && was != asleep_) park();
        m.slept_ = false;
    }
    if (was == woken_spinning_) {
        m.counted_ = true;  // the waker's count is ours now (it carries any owed duty)
        m.owes_ = false;
        return true;
    }
    return false;
}

// ---------------------------------------------------------------- lending a slot

bool idle_group::take(member& m) noexcept {
    // Only from dormant: the member is past its re-check and touches none
    // of its fields until a waker or retake moves the word to awake (which
    // no longer can while lent). seq_cst: ordered with wakers' CASes.
    std::uint32_t expected = dormant_;
    if (!m.word_.compare_exchange_strong(expected, lent_, std::memory_order_seq_cst)) return false;
    // Busy now: not a sleeper for the rule (which would otherwise try to
    // wake it, fail, and look again for ever).
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    return true;
}

void idle_group::hold(member& m) noexcept {
    // Only the lender writes while lent. seq_cst: the Dekker partner of a
    // retaker's flag-then-word order (the lender loads the flags after).
    m.word_.store(held_, std::memory_order_seq_cst);
}

bool idle_group::resume(member& m) noexcept {
    // acquire half: a retake that lost to us changed nothing; one that won
    // leaves awake and we fail.
    std::uint32_t expected = held_;
    return m.word_.compare_exchange_strong(expected, lent_, std::memory_order_seq_cst);
}

void idle_group::give_back(member& m) noexcept {
    // As announce_idle: counted a sleeper before it can be seen asleep, so
    // a waker that finds it dormant undoes exactly one count (the member's
    // withdraw). release (seq_cst store): the lender's writes to the
    // member's fields happen before the member's thread, woken later,
    // reads them (a waker's CAS continues this release sequence).
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    m.word_.store(dormant_, std::memory_order_seq_cst);
}

void idle_group::nudge(member& m) noexcept {
    const std::uint32_t w = m.word_.load(std::memory_order_seq_cst);
    if (w != lent_ && w != held_) return;
    // seq_cst: after the caller's seq_cst publication of the work (see the
    // looking_ store in sleep()). The exchange makes one nudger the waker:
    // until the woken thread runs (which may take a while on a busy
    // machine), later nudgers see `looking` and wake nobody. The woken
    // thread finds the word lent or held and looks from then on (or, if the
    // slot was given back meanwhile, give_back's re-check saw the work).
    if (!m.looking_.exchange(true, std::memory_order_seq_cst)) futex_wake(m.word_);
}

bool idle_group::retake(member& m) noexcept {
    if (m.word_.load(std::memory_order_seq_cst) != held_) return false;
    // The member's withdraw will drop one sleeper: count it first (a
    // transient count only makes a concurrent rule look again).
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    std::uint32_t expected = held_;
    if (!m.word_.compare_exchange_strong(expected, awake_, std::memory_order_seq_cst)) {
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        return false;  // the lender resumed it (it will give it back) or someone retook it
    }
    futex_wake(m.word_);  // a kernel-thread member (only those are dormant)
    return true;
}

// ---------------------------------------------------------------- wakers

bool idle_group::wake(member& m, wake_as how) noexcept {
    // seq_cst load: the Dekker partner of announce_idle's word store (and
    // of give_back's).
    std::uint32_t expected = m.word_.load(std::memory_order_seq_cst);
    if (expected != asleep_ && expected != dormant_) return false;
    const bool spinner = how == wake_as::spinner;
    // Count the spinner before the CAS: once woken, the member may drop the
    // count at any time, and it must never go below the truth.
    if (spinner) spinners_.fetch_add(1, std::memory_order_seq_cst);
    context* const ctx = m.ctx_;  // fixed before the member first announced itself
    // Retried while the member only moves from asleep to dormant (it is
    // still ours to wake); any other change means someone else woke it or
    // a lender took its slot (then it is busy, not asleep).
    bool won = false;
    for (;;) {
        if (m.word_.compare_exchange_strong(expected, spinner ? woken_spinning_ : awake_,
                                            std::memory_order_seq_cst)) {
            won = true;
            break;
        }
        if (expected != dormant_) break;
    }
    if (won) {
        // Our CAS made us the member's one waker (see sleep and withdraw).
        if (ctx) {
            unpark(*ctx);
        } else {
            const std::uint64_t trace_t0 = trace::on() ? trace::now() : 0;
            futex_wake(m.word_);
            if (trace_t0) [[unlikely]]
                trace::unpark(&m, trace_t0, trace::placed::idle_member);
        }
        return true;
    }
    // Someone else woke it (or it withdrew). Our transient count may have
    // hidden this moment from another publisher: rule callers look again.
    if (spinner) spinners_.fetch_sub(1, std::memory_order_seq_cst);
    return false;
}

bool idle_group::wake_from(std::size_t first, std::size_t count, wake_as how) noexcept {
    const std::size_t n = size();
    if (n == 0) return false;
    for (std::size_t k = 0; k < count && k < n; ++k) {
        member* m = members_[(first + k) % n].load(std::memory_order_acquire);
        if (m && wake(*m, how)) return true;
    }
    return false;
}

bool idle_group::wake_another(const member& self) noexcept {
    const std::size_t n = size();
    return n > 1 && wake_from(self.index_ + 1, n - 1, wake_as::plain);
}

// The wake rule. Invariant (the Dekker pair of the whole protocol): work is
// published with a seq_cst RMW before this rule's seq_cst loads; a member
// going to sleep raises `sleepers`, stores `asleep`, drops its spinner count
// (announce_idle, all seq_cst), then re-checks for work. So when the rule
// returns, either
//   - it saw sleepers == 0: every later sleeper announces after our load,
//     so its re-check comes after the publication and sees the work; or
//   - it saw a spinner: that spinner's drop comes after our load, and is
//     followed by this rule again (stop_spinning: the last spinner to find
//     work, with finds_work), or by its own re-check (announce_idle), which
//     either finds nothing (the work was taken) or finds work and runs
//     this rule again (the owed duty: it takes only one piece); or
//   - it woke one member as a spinner, which looks for work; or
//   - (wake_one_unless_watched) it saw a watcher, which comes back to look
//     when its timed sleep ends.
// A wake that fails (another waker won the CAS, or the member withdrew)
// undoes its transient count, which may have hidden the moment from a
// concurrent rule: so the rule looks again instead of returning.
void idle_group::apply_rule(bool watched_suffices) noexcept {
    for (unsigned round = 0;; ++round) {
        if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
        if (spinners_.load(std::memory_order_seq_cst) != 0) return;
        if (watched_suffices && watchers_.load(std::memory_order_seq_cst) != 0) return;
        if (wake_from(0, size(), wake_as::spinner)) return;
        // Every announced sleeper is between its announcement and its word,
        // just woke, or is not (or no longer) a member: look again.
        if (round >= 64) std::this_thread::yield();
        else cpu_relax();
    }
}

}  // namespace troupe::detail
