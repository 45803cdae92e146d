#pragma once
/// A selectable timeout: a clause that becomes available `d` after it is
/// registered.
///
///     troupe::timeout t{50ms};
///     troupe::select_node n{troupe::this_context()};
///     if (!t.register_select(n)) troupe::park();   // woken by the timer
///     t.unregister_select(n);
///
/// `waituntil(... | on(timeout(1s), body))` uses exactly this protocol.
#include <chrono>

#include "troupe/detail/timer.hpp"
#include "troupe/select.hpp"

namespace troupe {

class timeout {
public:
    explicit timeout(std::chrono::nanoseconds d) noexcept : duration_(d) {}
    timeout(const timeout&) = delete;
    timeout& operator=(const timeout&) = delete;
    ~timeout() { timer_cancel(timer_); }

    /// Arms the timer relative to now. A duration <= 0 is available at once
    /// (returns true if `n` is won). Never blocks. Arming may allocate (the
    /// timer heap grows): std::bad_alloc then propagates with nothing armed
    /// and `n` untouched (strong guarantee).
    bool register_select(select_node& n) {
        if (duration_ <= std::chrono::nanoseconds::zero()) return n.try_claim();
        node_ = &n;
        timer_.deadline = detail::timer_node::clock::now() + duration_;
        timer_.fire = &fire;
        timer_.arg = this;
        detail::timer_arm(timer_);
        return false;
    }
    /// Disarms the timer; returns false (a timeout has no pending
    /// operation). When it returns the callback is not running. nothrow.
    bool unregister_select(select_node&) noexcept {
        detail::timer_cancel(timer_);
        return false;
    }
    /// Always true: nothing can invalidate an expired timeout.
    bool on_selected(select_node&) noexcept { return true; }

    std::chrono::nanoseconds duration() const noexcept { return duration_; }
    /// How a dump of a waituntil names the clause.
    const char* select_kind() const noexcept { return "timeout"; }

private:
    static void fire(detail::timer_node& t) noexcept {
        // Runs under the timer lock, which unregister_select's cancel also
        // takes: claim and wake are complete before the waiter can leave.
        auto* self = static_cast<timeout*>(t.arg);
        if (self->node_->try_claim()) self->node_->wake();
    }

    std::chrono::nanoseconds duration_;
    detail::timer_node timer_;
    select_node* node_ = nullptr;
};

static_assert(selectable<timeout>);

}  // namespace troupe
