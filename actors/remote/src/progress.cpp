// The progress policy: who polls MPI when (progress.hpp states it and its
// invariants; docs/remote.md, "Progress", says why).
#include "progress.hpp"
#include "troupe/detail/service_thread.hpp"

#include <algorithm>
#include <future>
#include <limits>

#include "engine.hpp"
#include "frames.hpp"
#include "troupe/defaults/remote.hpp"
#include "troupe/detail/futex.hpp"
#include "troupe/detail/timer.hpp"

namespace troupe::remote::detail {

namespace cfg = troupe::defaults::remote;

namespace {
std::int64_t clock_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
// The engine whose thread this is: it polls in its own loop, and its own
// park() spin must not count as another thread polling.
thread_local const engine* engine_thread = nullptr;
}  // namespace

constinit thread_local asked_ask last_ask{};

void progress::start() {
    poller_ = troupe::detail::idle_poller{&progress::poll_hook, &progress::sleeping_hook, this,
                                          &progress::awaited_hook};
    try {
        troupe::detail::add_idle_poller(poller_);
        hooked_ = true;
    } catch (...) {}  // the table is full: the engine thread alone polls
    std::promise<void> started;
    thread_ = std::thread([this, &started] {
        waker.ctx_ = &this_context();
        engine_thread = &e_;
        started.set_value();
        run();
    });
    troupe::detail::name_kernel_thread(thread_, "troupe-remote");
    started.get_future().wait();
}

void progress::unhook() noexcept {
    if (hooked_) troupe::detail::remove_idle_poller(poller_);
    hooked_ = false;
}

void progress::stop() noexcept {
    quit_.store(true, std::memory_order_seq_cst);
    // The engine either sees quit_ before parking (work_queued) or is
    // parked and this increment brings the counter to 0.
    waker.force();
    wake_delegated();  // or it sleeps while others poll: quit_ is set first
    thread_.join();
}

void progress::run() noexcept {
    std::chrono::nanoseconds poll = cfg::first_poll;    // cold back-off
    std::chrono::nanoseconds watch = cfg::first_watch;  // delegated watchdog
    std::uint64_t seen_polls = external_polls_.load(std::memory_order_relaxed);
    std::int64_t seen_at = std::numeric_limits<std::int64_t>::min() / 2;  // polls last moved
    std::int64_t next_sweep = clock_ns() + cfg::probe_interval.count();
    for (;;) {
        // Request cycles across ranks: a sweep of probes every interval
        // while replies are awaited (a blocked behaviour's ask is one); the
        // next pass runs it. While replies are awaited this loop turns at
        // least every max_watch.
        if (const std::int64_t t = clock_ns(); t >= next_sweep) {
            next_sweep = t + cfg::probe_interval.count();
            if (awaited.load(std::memory_order_relaxed) > 0) e_.request_probes();
        }
        // Before the heartbeat: a poller that stops after this is caught by
        // delegated_sleep's recheck.
        const std::uint64_t sleeps = poller_sleeps_.load(std::memory_order_seq_cst);
        if (try_progress()) {
            poll = cfg::first_poll;
            // Without a spare core the pass may have woken the thread its
            // delivery is for, on our CPU: let it run.
            if (!spin_freely.load(std::memory_order_relaxed)) std::this_thread::yield();
            continue;
        }
        // A direct send went out without us: what it asked for may come
        // back soon (a tell that starts a ping-pong): count it as activity.
        if (waker.kicked_.load(std::memory_order_relaxed) &&
            waker.kicked_.exchange(false, std::memory_order_acq_rel))
            last_activity_.store(clock_ns(), std::memory_order_relaxed);
        if (quit_.load(std::memory_order_acquire) && !e_.busy_sending()) return;
        const std::int64_t now = clock_ns();
        if (const std::uint64_t n = external_polls_.load(std::memory_order_relaxed);
            n != seen_polls) {
            seen_polls = n;
            seen_at = now;
        }
        if (hot(now)) {
            poll = cfg::first_poll;
            if (now - seen_at < cfg::poller_fresh.count()) {
                // Idle threads are polling: keep out of their way (on a
                // machine with few cores a spinning engine takes the core
                // that would run the reply's receiver). The watchdog only
                // checks they are still there.
                if (delegated_sleep(watch, sleeps)) watch = cfg::first_watch;
                else watch = std::min(watch * 2, cfg::max_watch);
                continue;
            }
            // Nobody else polls: we do, without sleeping (the latency path).
            watch = cfg::first_watch;
            troupe::detail::cpu_relax();
            continue;
        }
        // Cold: one look per back-off interval; wakers cut the sleep short.
        if (idle_sleep(poll)) poll = cfg::first_poll;
        else poll = std::min(poll * 2, cfg::max_poll);
    }
}

bool progress::hot(std::int64_t now) const noexcept {
    return awaited.load(std::memory_order_seq_cst) > 0 || e_.sends_pending() ||
           now - last_activity_.load(std::memory_order_relaxed) < cfg::idle_spin.count();
}

bool progress::try_progress() noexcept {
    // Test first: idle threads poll all the time; only one at a time takes
    // the line for writing.
    if (token_.load(std::memory_order_relaxed) || token_.exchange(true, std::memory_order_acquire))
        return false;
    bool did;
    {
        // The pass's frames go to the token's buffer, not this kernel
        // thread's scratch buffer (see frames.hpp).
        pass_buffer_scope scope{pbuf_};
        did = e_.pass();
    }
    if (did) last_activity_.store(clock_ns(), std::memory_order_relaxed);
    token_.store(false, std::memory_order_release);
    return did;
}

bool progress::poll_hook(void* self) noexcept {
    auto* p = static_cast<progress*>(self);
    if (engine_thread == &p->e_) return false;  // the engine's own park() spin
    const std::uint64_t before = p->e_.traffic.batches_received.load(std::memory_order_relaxed);
    const bool did = p->try_progress();
    if (!did) {
        // The heartbeat: an idle thread polls (or found the token held, its
        // holder polls anyway). While it moves the engine thread keeps out
        // of the way.
        p->external_polls_.fetch_add(1, std::memory_order_relaxed);
    } else if (p->e_.traffic.batches_received.load(std::memory_order_relaxed) - before >= 2) {
        // A stream, not a ping-pong: we are about to be busy with what we
        // received, so let the engine thread receive the next batches
        // beside us (no heartbeat now, and wake it if it stepped aside).
        p->wake_delegated();
    }
    return did;
}

bool progress::awaited_hook(void* self) noexcept {
    // The calling thread's last ask still awaits its reply: it is parking
    // for it (most likely, in get()), so it keeps polling (core's park
    // spin). Other threads parking meanwhile (an idle worker of this rank)
    // do not: one spinning thread per rank.
    auto* p = static_cast<progress*>(self);
    if (engine_thread == &p->e_ || last_ask.e != &p->e_) return false;
    return p->e_.ask_pending(last_ask.id);
}

void progress::sleeping_hook(void* self) noexcept {
    auto* p = static_cast<progress*>(self);
    if (engine_thread == &p->e_) return;
    // Dekker with delegated_sleep: we bump the count, then read the word;
    // the engine sets the word, then rereads the count. Either it sees our
    // bump and does not sleep, or we see it asleep and wake it.
    p->poller_sleeps_.fetch_add(1, std::memory_order_seq_cst);
    p->wake_delegated();
}

void progress::wake_delegated() noexcept {
    if (handover_.load(std::memory_order_seq_cst) == 1 &&
        handover_.exchange(0, std::memory_order_seq_cst) == 1)
        troupe::detail::futex_wake(handover_);
}

bool progress::delegated_sleep(std::chrono::nanoseconds watch, std::uint64_t sleeps_seen) noexcept {
    handover_.store(1, std::memory_order_seq_cst);
    // The other half of sleeping_hook's pair (and of quit: stop() sets
    // quit_, then wakes us).
    if (poller_sleeps_.load(std::memory_order_seq_cst) != sleeps_seen ||
        quit_.load(std::memory_order_seq_cst)) {
        handover_.store(0, std::memory_order_seq_cst);
        return true;
    }
    const auto deadline = std::chrono::steady_clock::now() + watch;
    while (handover_.load(std::memory_order_seq_cst) == 1 &&
           std::chrono::steady_clock::now() < deadline)
        troupe::detail::futex_wait_until(handover_, 1, deadline);
    // 0: a waker cleared it (and wakes the futex: harmless now).
    return handover_.exchange(0, std::memory_order_seq_cst) == 0;
}

bool progress::work_queued() noexcept {
    if (quit_.load(std::memory_order_seq_cst) || waker.kicked_.load(std::memory_order_seq_cst))
        return true;
    return e_.work_queued();
}

bool progress::idle_sleep(std::chrono::nanoseconds d) {
    std::atomic<int>& counter = waker.counter_;
    // Banked wakes (a positive count) only say "look again"; we are awake
    // and look again below, so dropping them loses nothing.
    int c = counter.load(std::memory_order_relaxed);
    while (c > 0 && !counter.compare_exchange_weak(c, 0, std::memory_order_acq_rel)) {}
    if (try_progress()) return true;
    troupe::detail::timer_node t;
    t.deadline = troupe::detail::timer_node::clock::now() + d;
    t.arg = this;
    t.fire = [](troupe::detail::timer_node& n) noexcept {
        static_cast<progress*>(n.arg)->waker.force();
    };
    troupe::detail::timer_arm(t);
    if (counter.fetch_sub(1, std::memory_order_seq_cst) - 1 < 0) {
        // Announced: a waker that comes now unparks us. Recheck the outboxes
        // under their locks (the other half of wake()'s Dekker pair).
        if (work_queued()) {
            // Withdraw; if a waker brought the count to zero first, its
            // unpark is on the way: consume it.
            if (counter.fetch_add(1, std::memory_order_seq_cst) + 1 != 0) park();
        } else {
            park();  // exactly one unpark: whoever brings the count to zero
        }
    }
    troupe::detail::timer_cancel(t);  // after this the callback cannot run
    return false;
}

}  // namespace troupe::remote::detail
