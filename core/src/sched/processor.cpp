// Processors: kernel threads that run user threads. The ready queue, the
// hand-off slot, stealing, and the idle protocol (adaptive spin, announce,
// re-check, sleep) on top of the cluster's idle group. The design is in
// docs/scheduler.md; the wake rule and its invariant are in idle_group.cpp
// (idle_group::wake_one).
#include <algorithm>
#include <thread>

#include "diag/registry.hpp"
#include "sched/runtime.hpp"
#include "troupe/defaults/core.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/idle_poll.hpp"
#include "troupe/detail/service_thread.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/topology.hpp"

#if defined(TROUPE_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace troupe::detail {

namespace {
[[gnu::tls_model("initial-exec")]] thread_local processor* tls_processor = nullptr;
}

[[gnu::noinline]] processor* current_processor() noexcept { return tls_processor; }
void set_current_processor(processor* p) noexcept { tls_processor = p; }

processor::processor(cluster_impl& c, std::size_t i, int pin_pu)
    : owner(c),
      index(i),
      pin_pu_(pin_pu),
      rng_(detail::fast_rng::seed_for(i)),
      spin_estimate_ns_(c.settings.idle_spin_ns / 4),
      seen_(new handoff_seen[cluster_impl::max_processors]) {}

void processor::start() {
    kthread_ = std::thread([this] { run(); });
    detail::name_kernel_thread(kthread_, "troupe-proc-", index);
}

void processor::join_kernel_thread() {
    if (kthread_.joinable()) kthread_.join();
}

void processor::reset_after_retire() noexcept {
    // Joined: only pushers that read a stale `last` touch us (they see
    // retired_ under the lock and go elsewhere until we reopen it here).
    qlock_.lock();
    retired_ = false;
    qlock_.unlock();
    retire_.store(false, std::memory_order_relaxed);
    stop_.store(false, std::memory_order_relaxed);
    // idle_ is awake and uncounted: run() withdrew and stopped spinning
    // before the kernel thread ended.
    streak_ = 0;
    watch_ns_ = 0;
    // The cached exception-state and errno addresses belonged to the old
    // kernel thread (its TLS may now be another thread's): look them up
    // again on the new one.
    eh_ = nullptr;
    errno_ = nullptr;
}

// ---------------------------------------------------------------- ready work

bool processor::push(fiber* f, bool from_yield) noexcept {
    processor* self = current_processor();
    // Once `f` is queued it may run, finish, and let the cluster be
    // destroyed while we still look at this processor to wake it: a pusher
    // from outside the cluster registers itself so the destructor waits.
    const bool outside = self == nullptr || &self->owner != &owner;
    if (outside) owner.remote_pushes.fetch_add(1, std::memory_order_seq_cst);
    struct done_guard {
        std::atomic<int>* counter;
        ~done_guard() {
            if (counter) counter->fetch_sub(1, std::memory_order_release);
        }
    } done{outside ? &owner.remote_pushes : nullptr};
    qlock_.lock();
    if (retired_) {
        qlock_.unlock();
        return false;
    }
    f->ready_next = nullptr;
    if (tail_) tail_->ready_next = f;
    else head_ = f;
    tail_ = f;
    // seq_cst RMW: the publication half of the wake rule's Dekker pair (the
    // rule's seq_cst loads come after it; a sleeper's re-check comes after
    // its seq_cst announcement).
    const std::size_t n = qsize_.fetch_add(1, std::memory_order_seq_cst) + 1;
    qlock_.unlock();

    if (self == this) {
        // Our own queue. A yielder alone in it just runs again: no one to wake.
        if (!from_yield || n >= 2) owner.idlers.wake_one();
        return true;
    }
    // Someone else's queue: wake that processor if it sleeps (it inherits a
    // spinner count and finds the thread in its queue), else apply the rule.
    if (!owner.idlers.wake(idle_, idle_group::wake_as::spinner)) {
        // Its slot may be held by an OS thread between its waits: make
        // sure the processor's own thread looks at it now and then.
        if (owner.settings.held_look_ns > 0) owner.idlers.nudge(idle_);
        owner.idlers.wake_one();
    }
    return true;
}

void processor::hand_off(fiber* f) noexcept {
    // Only the kernel thread running this processor (its own, or a lender
    // in its slot while it sleeps) writes handoff_seq_ and places into
    // runnext_: a plain increment suffices.
    handoff_seq_.store(handoff_seq_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    // seq_cst exchange: publishes `f` (acq_rel with a thief's CAS) and is
    // the publication half of the wake rule's Dekker pair.
    fiber* previous = runnext_.exchange(f, std::memory_order_seq_cst);
#if defined(TROUPE_STATISTICS)
    counters.handoffs.fetch_add(1, std::memory_order_relaxed);
#endif
    if (previous) {
        // Go's rule: the newer hand-off runs next, the older one waits its
        // turn in the queue, where idle processors may steal it at once.
        if (!push(previous)) owner.schedule(previous);
    } else {
        owner.idlers.wake_one_unless_watched();
    }
}

fiber* processor::pop() noexcept {
    // seq_cst: a sleeper's re-check must not read a stale 0.
    if (qsize_.load(std::memory_order_seq_cst) == 0) return nullptr;
    qlock_.lock();
    fiber* f = head_;
    if (f) {
        head_ = f->ready_next;
        if (!head_) tail_ = nullptr;
        qsize_.fetch_sub(1, std::memory_order_relaxed);
    }
    qlock_.unlock();
    return f;
}

fiber* processor::take_local() noexcept {
    // The hand-off first, unless it has had its streak and others queue.
    if (runnext_.load(std::memory_order_relaxed) != nullptr &&
        (streak_ < owner.settings.handoff_streak || qsize_.load(std::memory_order_relaxed) == 0)) {
        // acq_rel: pairs with the placing exchange / a thief's CAS; exactly
        // one of us takes each placement.
        if (fiber* f = runnext_.exchange(nullptr, std::memory_order_acq_rel)) {
            ++streak_;
            return f;
        }
    }
    streak_ = 0;
    if (fiber* f = pop()) return f;
    return runnext_.exchange(nullptr, std::memory_order_acq_rel);
}

fiber* processor::steal_queued_from(processor& v) noexcept {
    if (v.qsize_.load(std::memory_order_seq_cst) == 0) return nullptr;
    // lock, not try_lock: a thief that gave up on a busy lock could go to
    // sleep with work queued (the wake rule counts on it finding it).
    v.qlock_.lock();
    fiber* f = v.head_;
    if (f) {
        v.head_ = f->ready_next;
        if (!v.head_) v.tail_ = nullptr;
        v.qsize_.fetch_sub(1, std::memory_order_relaxed);
    }
    v.qlock_.unlock();
    return f;
}

fiber* processor::steal_handoff_from(processor& v, std::int64_t now) noexcept {
    handoff_seen& s = seen_[v.index];
    fiber* f = v.runnext_.load(std::memory_order_acquire);
    if (!f) {
        s.at = -1;
        return nullptr;
    }
    const std::uint32_t seq = v.handoff_seq_.load(std::memory_order_relaxed);
    if (s.at < 0 || s.seq != seq) {
        // A new placement: start its grace period (our own clock).
        s.seq = seq;
        s.at = now;
        return nullptr;
    }
    if (now - s.at < owner.settings.handoff_grace_ns) return nullptr;
    // The same placement waited a whole grace period: its waker's
    // processor is still busy. The CAS is the claim (the owner takes the
    // slot with an exchange); a stale seq only makes us steal early.
    if (v.runnext_.compare_exchange_strong(f, nullptr, std::memory_order_acq_rel)) {
        s.at = -1;
        return f;
    }
    return nullptr;
}

fiber* processor::find_work(bool steal_handoffs) noexcept {
    if (fiber* f = take_local()) return f;
    const std::size_t n = owner.processor_count();
    if (n <= 1) return nullptr;
    const std::size_t start = rng_.below(n);  // a cheap per-thief random starting victim
    bool handoffs = false;
    for (std::size_t k = 0; k < n; ++k) {
        processor* v = owner.active_at((start + k) % n);
        if (!v || v == this) continue;
        if (fiber* f = steal_queued_from(*v)) {
#if defined(TROUPE_STATISTICS)
            counters.steals.fetch_add(1, std::memory_order_relaxed);
#endif
            if (trace::on()) [[unlikely]]
                trace::steal(f, v->index, false);
            return f;
        }
        handoffs = handoffs || v->runnext_.load(std::memory_order_relaxed) != nullptr;
    }
    if (!steal_handoffs || !handoffs) return nullptr;
    const std::int64_t now = now_ns();
    for (std::size_t k = 0; k < n; ++k) {
        processor* v = owner.active_at((start + k) % n);
        if (!v || v == this) continue;
        if (fiber* f = steal_handoff_from(*v, now)) {
#if defined(TROUPE_STATISTICS)
            counters.steals.fetch_add(1, std::memory_order_relaxed);
#endif
            if (trace::on()) [[unlikely]]
                trace::steal(f, v->index, true);
            watch_ns_ = 0;  // watching paid off: watch closely again
            return f;
        }
    }
    return nullptr;
}

bool processor::handoff_pending_elsewhere() const noexcept {
    const std::size_t n = owner.processor_count();
    for (std::size_t k = 0; k < n; ++k) {
        processor* v = owner.active_at(k);
        if (v && v != this && v->runnext_.load(std::memory_order_seq_cst) != nullptr) return true;
    }
    return false;
}

// ---------------------------------------------------------------- waking and idling

// The flag first, then the word (seq_cst both): a lender that holds the
// slot stores `held` and then loads the flags (processor::lend), so either
// it sees the flag and gives the slot back (give_back wakes us), or we see
// `held` and retake the slot. A slot being run (lent) is given back by its
// lender, which checks the flags between threads.
void processor::request_retire() noexcept {
    retire_.store(true, std::memory_order_seq_cst);
    if (!owner.idlers.wake(idle_, idle_group::wake_as::plain)) owner.idlers.retake(idle_);
}

void processor::request_stop() noexcept {
    stop_.store(true, std::memory_order_seq_cst);
    if (!owner.idlers.wake(idle_, idle_group::wake_as::plain)) owner.idlers.retake(idle_);
}

bool processor::asleep() const noexcept { return owner.idlers.asleep(idle_); }
bool processor::lent() const noexcept { return owner.idlers.lent(idle_); }
bool processor::dormant() const noexcept { return owner.idlers.dormant(idle_); }

fiber* processor::idle() noexcept {
    const schedule_settings& cfg = owner.settings;
    idle_group& g = owner.idlers;
    // Spin phase: counted as a spinner (a count inherited from a waker, or
    // our own). While we are counted, the wake rule wakes no one for queued
    // work: we will find it.
    g.start_spinning(idle_);
    std::int64_t start = now_ns();
    // Adaptive budget: twice the recent time-to-work, within [min, max];
    // spinning that finds nothing halves the estimate, so a processor on a
    // machine without spare cores soon parks at once.
    const std::int64_t floor = std::min<std::int64_t>(cfg.idle_spin_ns, 2000);
    std::int64_t budget = std::clamp<std::int64_t>(2 * spin_estimate_ns_, floor, cfg.idle_spin_ns);
    for (unsigned i = 0;; ++i) {
        if (fiber* f = find_work(true)) {
            const std::int64_t took = now_ns() - start;
            spin_estimate_ns_ = (3 * spin_estimate_ns_ + took) / 4;
            g.stop_spinning(idle_);  // the last spinner passes the duty on
            return f;
        }
        if (retire_.load(std::memory_order_relaxed) || stop_.load(std::memory_order_relaxed)) break;
        // An idle poller (troupe/detail/idle_poll.hpp) that found work may
        // have made a thread ready here: look again at once, and spin on
        // for a whole budget from now (traffic is likely to go on).
        if (poll_idle()) {
            start = now_ns();
            budget = cfg.idle_spin_ns;
            continue;
        }
        // Poll with pause only, never sched_yield: on a loaded machine a
        // yield hands this core to another process for a whole time slice,
        // and an OS thread of ours woken meanwhile (a channel consumer, a
        // joiner) waited for it. Measured: the worker pool with an OS-thread
        // consumer beside niced compiles took 0.4-0.8 s with a yield every
        // 16 polls, 0.02-0.05 s without (bench/RESULTS.md). The spin is
        // bounded by the adaptive budget instead.
        if ((i & 15) == 15 && now_ns() - start >= budget) break;
        cpu_relax();
    }
    spin_estimate_ns_ /= 2;

    // Announce (drops our spinner count), then look once more: the
    // re-check half of the wake rule's Dekker pair.
    g.announce_idle(idle_);
    fiber* f = nullptr;
    const bool leaving =
        retire_.load(std::memory_order_seq_cst) || stop_.load(std::memory_order_seq_cst);
    if (!leaving) f = find_work(true);
    if (!f && !leaving) {
#if defined(TROUPE_STATISTICS)
        counters.sleeps.fetch_add(1, std::memory_order_relaxed);
#endif
        idle_sleeping();  // the idle pollers' last word before we stop polling
        if (handoff_pending_elsewhere()) {
            // A hand-off waits on a busy processor: it is not ours until
            // its grace passes, and its waker may keep computing. Sleep
            // with a timeout (doubling while watching finds nothing to
            // steal), then come back to look. Counted as a watcher, so
            // further hand-offs do not wake anyone.
            watch_ns_ =
                watch_ns_ ? std::min(2 * watch_ns_, cfg.handoff_watch_ns) : cfg.handoff_grace_ns;
            const auto deadline =
                std::chrono::steady_clock::now() + std::chrono::nanoseconds(watch_ns_);
            g.sleep_until(idle_, deadline, idle_group::sleep_kind::watching);
        } else {
            note_idle_sleep();  // the watch thread may check for a deadlock
            sleep_lendable();
        }
    }
    // Withdraw. Woken as a spinner, we hold the waker's count: with work in
    // hand we drop it (passing the duty on), else we spin next on it.
    g.withdraw(idle_);
    if (f) g.stop_spinning(idle_);
    return f;
}

// The plain sleep, during which an OS thread may take the slot (lending.cpp).
// While it is held, look at the queue now and then (Go's sysmon retake):
// work queued there while the lender, back in its own code, has not run the
// slot since the previous look is ours to run, so take the slot back.
void processor::sleep_lendable() noexcept {
    idle_group& g = owner.idlers;
    const auto first = std::chrono::nanoseconds(owner.settings.held_look_ns);
    auto look = first;
    std::uint32_t seen = 0;
    bool have_seen = false;
    while (!g.sleep(idle_, look)) {
        // Held for a whole look. relaxed: the epoch is a heuristic (a lender
        // that resumed meanwhile makes retake fail anyway).
        const std::uint32_t epoch = lend_epoch_.load(std::memory_order_relaxed);
        const bool stale = have_seen && epoch == seen;
        // seq_cst loads: published work is seen (pushes are seq_cst RMWs).
        const bool waiting = qsize_.load(std::memory_order_seq_cst) != 0 ||
                             runnext_.load(std::memory_order_seq_cst) != nullptr;
        if (stale && waiting && g.retake(idle_)) return;  // awake, counted a sleeper: withdraw
        // Looking finds nothing to do: look less often, up to 16 times the first.
        look = stale && !waiting ? std::min(2 * look, 16 * first) : first;
        seen = epoch;
        have_seen = true;
    }
}

void processor::run() noexcept {
    tls_processor = this;
#if defined(TROUPE_TSAN)
    tsan_self = __tsan_get_current_fiber();
#endif
    trace::label_thread("processor", index, owner.name);
    if (pin_pu_ >= 0) {
        try {
            topology().bind_current_thread(static_cast<std::size_t>(pin_pu_));
        } catch (...) {
            // Pinning is an optimisation; an unbindable machine still runs.
        }
    }
    for (;;) {
        // Checked between threads, not only when idle: a busy processor
        // must still retire promptly when its cluster shrinks.
        if (retire_.load(std::memory_order_acquire)) break;
        fiber* f = find_work(false);
        // Woken as a spinner and found work at once: drop the count (a
        // no-op unless we hold one).
        if (f) owner.idlers.stop_spinning(idle_);
        if (!f) {
            if (stop_.load(std::memory_order_acquire)) break;
            f = idle();
            if (!f) continue;
            if (retire_.load(std::memory_order_acquire)) {
                owner.schedule(f);  // not ours to run any more (drained below)
                break;
            }
        }
        run_fiber(f);
    }
    // A waker may have counted on us; we leave, so pass the duty on.
    owner.idlers.stop_spinning(idle_);
    if (retire_.load(std::memory_order_acquire)) close_queue();
    tls_processor = nullptr;
}

// Queue retirement, the one place it is done (a retiring processor, above).
//
// Invariant: no ready thread is stranded on a closed processor. retired_ is
// set under qlock_, and push() tests it under qlock_, so a pusher either
// queued its thread before the close (the thread is in the list taken here
// and handed to the cluster) or sees retired_ and places it elsewhere.
// Only this processor's own kernel thread places into the hand-off slot
// (hand_off), and it is the caller here and runs no user thread until the
// queue is open again, so the slot, emptied by the exchange after the
// close, stays empty; a thief that wins the exchange's race runs the
// thread itself.
void processor::close_queue() noexcept {
    qlock_.lock();
    retired_ = true;
    fiber* list = head_;
    head_ = tail_ = nullptr;
    qsize_.store(0, std::memory_order_relaxed);
    qlock_.unlock();
    if (fiber* next = runnext_.exchange(nullptr, std::memory_order_acq_rel)) owner.schedule(next);
    while (list) {
        fiber* next = list->ready_next;
        owner.schedule(list);
        list = next;
    }
}

}  // namespace troupe::detail
