// Actor timers (troupe/actor_timer.hpp): the state machine of a timed
// message between the timer service, the worker delivering it and cancel().
//
// States (timer_core::state) and who moves them:
//   armed    -> fired      the service's callback (under the timer lock)
//   armed    -> cancelled  cancel()
//   fired    -> running    the delivery, before the receive
//   fired    -> cancelled  cancel() (the queued envelope is then dropped)
//   fired    -> done       the drop of an envelope to a finished actor
//   running  -> running_cancelled  cancel() during the receive
//   running  -> armed      a periodic timer's delivery re-arming it
//   running(_cancelled) -> done / cancelled  the delivery's end
// Each move is one compare-and-swap, so a delivery starts (fired -> running)
// only if no cancel came first: once cancel() returns, no delivery starts.
//
// References (timer_core::refs): the handle's and the flight's (from
// timer_start until the state is done or cancelled and nobody will touch the
// node again). Exactly one party releases the flight: the callback if it
// finds the timer cancelled, cancel() if its timer_cancel removed the node
// from the heap (the callback then never runs), the delivery otherwise.
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>

#include "executor.hpp"
#include "troupe/actor_timer.hpp"
#include "troupe/error.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::detail {

namespace {

// Flights in this process (armed, queued or running timers): troupe::dump.
std::atomic<std::size_t> flights{0};

// Executors alive, for the callbacks: a callback runs asynchronously to the
// program, so the system of its actor may be stopped and destroyed under
// it (the actor finished; stop() waits for actors, not for timers). A
// callback finds its actor's executor here by the mailbox address (never
// dereferencing a freed one) and sends under this lock, which an
// executor's destructor takes to leave the list.
spinlock systems_lock{"actor timer systems"};
executor* systems = nullptr;  // under systems_lock, linked by timers_next

executor* live_exec_of(const actor& a) noexcept {
    const mailbox* mb = worker_access::box(a);
    for (executor* e = systems; e; e = e->timers_next)
        if (mb >= e->mailboxes.get() && mb < e->mailboxes.get() + e->mailbox_count) return e;
    return nullptr;
}

void free_record(timer_core& c) noexcept { delete static_cast<message*>(c.node.arg); }

void release_ref(timer_core& c) noexcept {
    // acq_rel: the last holder frees after every other holder's last touch.
    if (c.refs.fetch_sub(1, std::memory_order_acq_rel) == 1) free_record(c);
}

void release_flight(timer_core& c) noexcept {
    flights.fetch_sub(1, std::memory_order_relaxed);
    release_ref(c);
}

bool move(timer_core& c, std::uint32_t from, std::uint32_t to) noexcept {
    // acq_rel: each party's writes to the record (the node's deadline, the
    // message) happen before the next party's reads.
    return c.state.compare_exchange_strong(from, to, std::memory_order_acq_rel,
                                           std::memory_order_acquire);
}

executor* exec_of_target(const timer_core& c) noexcept {
    mailbox* mb = worker_access::box(*c.target);
    return mb ? mb->exec : nullptr;
}

void count_dropped(const timer_core& c) noexcept {
    if (executor* ex = exec_of_target(c))
        ex->timers_dropped.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void timers_add_system(executor& ex) noexcept {
    systems_lock.lock();
    ex.timers_next = systems;
    systems = &ex;
    systems_lock.unlock();
}

void timers_remove_system(executor& ex) noexcept {
    systems_lock.lock();
    for (executor** p = &systems; *p; p = &(*p)->timers_next)
        if (*p == &ex) {
            *p = ex.timers_next;
            break;
        }
    systems_lock.unlock();
}

std::size_t actor_timers_pending() noexcept { return flights.load(std::memory_order_relaxed); }

void check_period(std::chrono::nanoseconds period) {
    if (period <= std::chrono::nanoseconds::zero())
        throw std::invalid_argument("troupe: send_every needs a period > 0 (got " +
                                    std::to_string(period.count()) + " ns)");
}

void timer_release(timer_core& c) noexcept { release_ref(c); }

void timer_start(timer_core& c) {
    flights.fetch_add(1, std::memory_order_relaxed);
    try {
        timer_arm(c.node);
    } catch (...) {
        flights.fetch_sub(1, std::memory_order_relaxed);
        throw;
    }
}

void timer_fire(timer_core& c, message& m, dispatch_fn fn, const dispatch_names& names) noexcept {
    if (!move(c, timer_armed, timer_fired)) {
        release_flight(c);  // cancelled while armed: its cancel() left the flight to us
        return;
    }
    systems_lock.lock();
    executor* ex = live_exec_of(*c.target);
    if (!ex || ex->stopped.load(std::memory_order_acquire)) {
        // Its system has stopped (or is gone): nobody will ever receive it.
        if (move(c, timer_fired, timer_done) && ex) count_dropped(c);
        systems_lock.unlock();
        release_flight(c);
        return;
    }
    try {
        // A refused send (a finished actor) runs the trampoline with no
        // actor: timer_dropped releases the flight.
        send(*c.target, m, fn, names);
        systems_lock.unlock();
    } catch (...) {
        systems_lock.unlock();
        move(c, timer_fired, timer_done);
        report_misuse(describe("actor", user_type_name(names.actor).c_str(), c.target) +
                          ": no memory to queue its timer message '" +
                          user_type_name(names.message) + "'; lost",
                      misuse_kind::lost_message);
        release_flight(c);
    }
}

bool timer_begin(timer_core& c) noexcept {
    if (move(c, timer_fired, timer_running)) return true;
    release_flight(c);  // cancelled while queued
    return false;
}

void timer_end(timer_core& c, const periodic_part* p, bool ended) noexcept {
    if (!p || ended) {
        c.state.store(timer_done, std::memory_order_release);
        release_flight(c);
        return;
    }
    // Periodic: the next deadline, written while we own the node (running).
    const auto now = std::chrono::steady_clock::now();
    auto next = c.node.deadline + p->period;
    if (next <= now) next = now + p->period;  // behind: skip the missed ticks
    c.node.deadline = next;
    if (!move(c, timer_running, timer_armed)) {
        c.state.store(timer_cancelled, std::memory_order_release);  // cancelled during the receive
        release_flight(c);
        return;
    }
    // Our own reference while we look at the record after arming: the
    // flight may end (fire, deliver, cancel) before we are done.
    c.refs.fetch_add(1, std::memory_order_relaxed);
    try {
        timer_arm(c.node);
    } catch (...) {
        // No room in the timer heap: the timer ends (reported).
        move(c, timer_armed, timer_done);
        report_misuse("troupe: no memory to re-arm a periodic actor timer; it stops",
                      misuse_kind::lost_message);
        release_flight(c);
        release_ref(c);
        return;
    }
    // A cancel between our move to armed and the arm found nothing in the
    // heap and left the flight to whoever takes the node out: us, if the
    // callback has not run.
    if (c.state.load(std::memory_order_acquire) == timer_cancelled && timer_cancel(c.node))
        release_flight(c);
    release_ref(c);
}

void timer_dropped(timer_core& c, message&) noexcept {
    if (move(c, timer_fired, timer_done)) count_dropped(c);
    release_flight(c);
}

bool timer_cancel_actor(timer_core& c, bool periodic) noexcept {
    for (;;) {
        std::uint32_t s = c.state.load(std::memory_order_acquire);
        switch (s) {
        case timer_armed:
            if (!move(c, timer_armed, timer_cancelled)) continue;
            // Removed from the heap: the callback never runs, the flight is
            // ours to end. Not in the heap: the callback ran (and found it
            // cancelled) or a periodic re-arm is about to put it back (and
            // then takes it out, see timer_end).
            if (timer_cancel(c.node)) release_flight(c);
            return true;
        case timer_fired:
            if (!move(c, timer_fired, timer_cancelled)) continue;
            return true;  // the queued envelope is dropped at its turn
        case timer_running:
            if (!move(c, timer_running, timer_running_cancelled)) continue;
            return periodic;    // a one-shot's only delivery is under way
        default: return false;  // cancelled, done
        }
    }
}

}  // namespace troupe::detail
