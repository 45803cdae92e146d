#pragma once
/// Timer channels, Go's time.After / time.NewTimer and time.NewTicker: a
/// channel that the timer service fills, usable wherever a channel is (a
/// blocking remove, a waituntil clause, a range-for).
///
///     waituntil(on(jobs.remove_into(j), [&] { run(j); })
///             | on(troupe::after(1s).remove_discard(), [&] { give_up(); }));
///
///     troupe::ticker tick{100ms};
///     for (auto now : tick) {           // one element per tick
///         poll(now);
///         if (done()) tick.stop();      // the loop ends after this pass
///     }
///
/// Both hold a `channel<timer_clock::time_point>` of capacity 1. The one
/// timer service of core (a min-heap and one sleeping thread for the whole
/// process) delivers into it: no thread per timer.
///  - `timer` (`after(d)`) delivers the time once, `d` from its creation,
///    and then closes its channel: a range-for yields one element and
///    ends, a second remove throws channel_closed (Go would block for
///    ever). `stop()` before delivery closes it with nothing in it.
///  - `ticker` delivers the time every `period` while the previous tick
///    was taken; if it was not (a slow receiver), the tick is dropped, not
///    queued (Go's semantics: the receiver sees the most recent due tick
///    late, then the schedule goes on). `stop()` discards a pending tick
///    and closes the channel: a receiver blocked in remove() gets
///    channel_closed, a range-for ends, also when stop() is called from
///    inside its own loop.
/// Destroying either stops it first. Neither may be moved (the timer
/// service holds its address); `after(d)` returns one by guaranteed copy
/// elision, so `auto t = troupe::after(1s);` works.
///
/// Cost: one channel (a 64-byte ring) and one timer node per timer;
/// arming is a heap insertion under the timer service's lock.
#include <chrono>
#include <cstddef>
#include <stdexcept>

#include "troupe/channel.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/stop_token.hpp"

namespace troupe {

/// The clock of timer channels (the one of every troupe timeout).
using timer_clock = std::chrono::steady_clock;

namespace detail {

/// What timer and ticker share: the channel, the timer node and the
/// receiving side.
class timer_channel_base {
public:
    using time_point = timer_clock::time_point;
    using channel_type = channel<time_point>;

    timer_channel_base(const timer_channel_base&) = delete;
    timer_channel_base& operator=(const timer_channel_base&) = delete;

    /// The underlying channel (to pass where a channel is expected).
    channel_type& chan() noexcept { return ch_; }
    /// Parks until the next delivery and returns its time; throws
    /// channel_closed once stopped (or, for a timer, once its one
    /// delivery was taken).
    time_point remove() { return ch_.remove(); }
    /// As remove(), but throws `cancelled` if `tok` is stopped first.
    time_point remove(const stop_token& tok) { return ch_.remove(tok); }
    /// Takes a delivery if one is waiting: success, empty or closed.
    channel_status try_remove(time_point& out) { return ch_.try_remove(out); }
    /// Select clauses (see channel::remove_into).
    [[nodiscard]] channel_remove_clause<time_point> remove_into(time_point& v) noexcept {
        return ch_.remove_into(v);
    }
    [[nodiscard]] channel_remove_clause<time_point> remove_into(time_point& v, bool& ok) noexcept {
        return ch_.remove_into(v, ok);
    }
    [[nodiscard]] channel_remove_clause<time_point> remove_discard() noexcept {
        return ch_.remove_discard();
    }
    /// Range-for: one element per delivery, until stopped.
    channel_type::iterator begin() { return ch_.begin(); }
    std::default_sentinel_t end() noexcept { return {}; }
    /// Whether stop() was called (or the timer delivered and closed).
    bool stopped() const noexcept { return ch_.is_closed(); }

protected:
    timer_channel_base(const char* name) : ch_(1, name) {}
    ~timer_channel_base() = default;

    channel_type ch_;
    timer_node node_;
};

}  // namespace detail

/// A one-shot timer channel (Go's time.NewTimer / time.After).
class timer : public detail::timer_channel_base {
public:
    /// Delivers the time once, `d` from now (at once if `d` <= 0), then
    /// closes. `name` (not copied) names the channel in dumps. Throws
    /// std::bad_alloc (nothing armed).
    explicit timer(std::chrono::nanoseconds d, const char* name = "after");
    /// Stops the timer (see stop()).
    ~timer() { (void)stop(); }

    /// Prevents the delivery if it has not happened: returns true and
    /// closes the channel empty. Returns false if the time was delivered
    /// already (it stays in the channel until taken) or stop() ran before.
    /// When it returns the timer service no longer touches the timer.
    /// Never blocks for long (the service's lock); nothrow.
    bool stop() noexcept;

private:
    static void fire(detail::timer_node& n) noexcept;
};

/// Go's time.After: a timer delivering `d` from now.
inline timer after(std::chrono::nanoseconds d) { return timer{d}; }

/// A periodic timer channel (Go's time.NewTicker).
class ticker : public detail::timer_channel_base {
public:
    /// Delivers the time every `period` (> 0: std::invalid_argument
    /// otherwise, Go panics), the first one `period` from now, dropping
    /// ticks a slow receiver did not take. `name` (not copied) names the
    /// channel in dumps. Throws std::bad_alloc (nothing armed).
    explicit ticker(std::chrono::nanoseconds period, const char* name = "ticker");
    ~ticker() { stop(); }

    /// Stops the ticks: a pending one is discarded and the channel closed
    /// (a blocked receiver gets channel_closed, a range-for ends). Safe from
    /// inside the receive loop and from any thread; calling it again does
    /// nothing. When it returns the timer service no longer touches the
    /// ticker. nothrow.
    void stop() noexcept;
    std::chrono::nanoseconds period() const noexcept { return period_; }

private:
    static void fire(detail::timer_node& n) noexcept;
    std::chrono::nanoseconds period_;
};

// ------------------------------------------------------------ out of line
//
// The callbacks run on the timer service thread under its lock (the same
// lock stop()'s timer_cancel takes), so a callback and stop() never
// overlap, and once timer_cancel returns no callback is running or will
// run. A callback only does non-blocking channel steps (try_insert, close),
// which wake a blocked receiver with unpark.

inline timer::timer(std::chrono::nanoseconds d, const char* name) : timer_channel_base(name) {
    if (d <= std::chrono::nanoseconds::zero()) {
        (void)ch_.try_insert(timer_clock::now());  // room: a new channel of capacity 1
        ch_.close();
        return;
    }
    node_.deadline = timer_clock::now() + d;
    node_.fire = &fire;
    node_.arg = this;
    detail::timer_arm(node_);  // bad_alloc: nothing armed, the channel goes
}

inline void timer::fire(detail::timer_node& n) noexcept {
    auto* self = static_cast<timer*>(n.arg);
    (void)self->ch_.try_insert(timer_clock::now());  // the channel is empty: success
    self->ch_.close();                               // the receiver drains the one element first
}

inline bool timer::stop() noexcept {
    // timer_cancel: true iff the callback will never run (it was armed).
    if (!detail::timer_cancel(node_)) return false;
    ch_.close();
    return true;
}

inline ticker::ticker(std::chrono::nanoseconds period, const char* name)
    : timer_channel_base(name), period_(period) {
    if (period <= std::chrono::nanoseconds::zero())
        throw std::invalid_argument("troupe::ticker: the period must be positive");
    node_.deadline = timer_clock::now() + period;
    node_.period = std::chrono::duration_cast<timer_clock::duration>(period);
    node_.fire = &fire;
    node_.arg = this;
    detail::timer_arm(node_);
}

inline void ticker::fire(detail::timer_node& n) noexcept {
    // full: the last tick was not taken; drop this one (Go's ticker).
    (void)static_cast<ticker*>(n.arg)->ch_.try_insert(timer_clock::now());
}

inline void ticker::stop() noexcept {
    detail::timer_cancel(node_);  // from here on nothing inserts
    time_point pending;
    while (ch_.try_remove(pending) == channel_status::success) {}
    ch_.close();
}

}  // namespace troupe
