// Ask deadlines: the timer record of an ask with a deadline, its expiry and
// the late answers it leaves behind.
#include <chrono>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "executor.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/error.hpp"
#include "troupe/request.hpp"
#include "troupe/request_error.hpp"

namespace troupe::detail {

// One per ask with a deadline, allocated by arm_deadline and freed by the
// requester's side (settle_deadline / disarm_deadline). The timer node comes
// first: the service's callback finds the record from it.
struct deadline_ask {
    timer_node node;
    request_tag* q = nullptr;
    bool (*expire)(request_tag&, std::exception_ptr) noexcept = nullptr;
    const dispatch_names* names = nullptr;
    const actor* asked = nullptr;
    // The asked system's counter, held (one ask's reference) while the ask
    // is counted: from begin_ask until the answer that takes counted_ask.
    ask_counter* counter = nullptr;
    std::chrono::steady_clock::time_point began;
    // Fulfilled by the late answer of an expired round: after it, the
    // receiver never touches the request again.
    future<void> released;
};

namespace {

std::string timeout_text(const deadline_ask& d, const char* how) {
    const double ms = std::chrono::duration<double, std::milli>(d.node.deadline - d.began).count();
    char when[64];
    std::snprintf(when, sizeof when, "%.3g ms", ms);
    return "troupe: ask of request '" + user_type_name(d.names->message) + "' to " +
           describe("actor", user_type_name(d.names->actor).c_str(), d.asked) + " " + how +
           " (deadline " + when + " after the ask)";
}

std::exception_ptr timeout_error(const deadline_ask& d, const char* how) noexcept {
    try {
        return std::make_exception_ptr(
            request_error(request_error::reason::timeout, timeout_text(d, how)));
    } catch (...) {
        return std::current_exception();  // std::bad_alloc: still an answer
    }
}

// Runs on the timer service's thread under its lock (so never while the
// requester's side cancels the timer: settle_deadline may free q only after
// its cancel returned). Never blocks: the expiry fulfils a future.
void on_deadline(timer_node& n) noexcept {
    auto& d = *static_cast<deadline_ask*>(n.arg);
    // Counted before the claim (undone if it fails): the requester wakes
    // the moment the expiry is published, and a late answer right after it
    // decrements awaiting_late, which must not wrap below zero in a dump.
    d.counter->timed_out.fetch_add(1, std::memory_order_relaxed);
    d.counter->awaiting_late.fetch_add(1, std::memory_order_relaxed);
    if (!d.expire(*d.q, timeout_error(d, "timed out"))) {
        d.counter->awaiting_late.fetch_sub(1, std::memory_order_relaxed);
        d.counter->timed_out.fetch_sub(1, std::memory_order_relaxed);
    }
}

}  // namespace

void arm_deadline(request_tag& q, actor& a, const dispatch_names& names,
                  std::chrono::steady_clock::time_point when,
                  bool (*expire)(request_tag&, std::exception_ptr) noexcept) {
    auto* d = new deadline_ask;
    d->q = &q;
    d->expire = expire;
    d->names = &names;
    d->asked = &a;
    d->began = std::chrono::steady_clock::now();
    d->counter = q.counted_ask;
    if (!d->counter) {
        // An actor with no system counts nowhere; give the record a private
        // counter so expiry and late answers need no test.
        try {
            d->counter = new ask_counter;
            d->counter->word.store(2, std::memory_order_relaxed);  // one ask, no executor
            q.counted_ask = d->counter;
        } catch (...) {
            delete d;
            throw;
        }
    }
    d->node.deadline = when;
    d->node.fire = &on_deadline;
    d->node.arg = d;
    q.deadline = d;
    try {
        timer_arm(d->node);
    } catch (...) {
        q.deadline = nullptr;
        delete d;
        throw;
    }
}

std::exception_ptr deadline_passed(request_tag& q, actor& a, const dispatch_names& names) noexcept {
    (void)q;
    deadline_ask d;
    d.names = &names;
    d.asked = &a;
    d.began = d.node.deadline = std::chrono::steady_clock::now();
    if (mailbox* mb = worker_access::box(a); mb && mb->exec)
        mb->exec->asks.p->timed_out.fetch_add(1, std::memory_order_relaxed);
    return timeout_error(d, "not sent: its deadline had already passed");
}

void late_answer(request_tag& q) noexcept {
    deadline_ask* const d = q.deadline;
    ask_counter* const c = std::exchange(q.counted_ask, nullptr);
    // From here on q is the requester's again: released below lets its
    // reset() or destructor go on.
    if (c) {
        c->late_replies.fetch_add(1, std::memory_order_relaxed);
        c->awaiting_late.fetch_sub(1, std::memory_order_relaxed);
        end_ask(c);
    }
    d->released.fulfil();
}

void settle_deadline(request_tag& q, std::atomic<round>& state) noexcept {
    deadline_ask* const d = q.deadline;
    // After this the expiry callback is not running and never will.
    timer_cancel(d->node);
    round s = round::open;
    // acq_rel: against the receiver's claim (orders its answer's writes
    // before our reading of q, or makes it see our claim).
    if (state.compare_exchange_strong(s, round::expired, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        // Abandoned in flight: the receiver's answer will come as a late one.
        d->counter->awaiting_late.fetch_add(1, std::memory_order_relaxed);
        s = round::expired;
    }
    if (s == round::expired) {
        try {
            d->released.get();
        } catch (...) {
            // released only ever carries fulfil(): nothing to rethrow
        }
    }
    q.deadline = nullptr;
    delete d;
}

void disarm_deadline(request_tag& q, bool expired) noexcept {
    deadline_ask* const d = q.deadline;
    timer_cancel(d->node);
    if (expired) d->counter->awaiting_late.fetch_sub(1, std::memory_order_relaxed);
    q.deadline = nullptr;
    delete d;
}

}  // namespace troupe::detail
