// The asks awaiting replies (invariants in ask_table.hpp).
#include "ask_table.hpp"

#include <memory>
#include <thread>
#include <utility>

namespace troupe::remote::detail {

ask_table::~ask_table() {
    for (;;) {
        ask_deadline* d = nullptr;
        lock_.lock();
        for (slot& s : slots_)
            if (s.deadline) {
                d = std::exchange(s.deadline, nullptr);
                break;
            }
        lock_.unlock();
        if (!d) break;
        release(d);  // waits out a callback that runs now (it finds no live slot)
    }
}

void ask_table::release(ask_deadline* d) noexcept {
    if (!d) return;
    // After this the callback is not running and never will (timer.hpp).
    troupe::detail::timer_cancel(d->node);
    delete d;
}

std::uint64_t ask_table::add(troupe::detail::request_tag& q, ask_complete_fn fn, int to,
                             std::string_view name, std::chrono::steady_clock::time_point when,
                             std::string what, const ask_label& label) {
    auto d = std::make_unique<ask_deadline>();
    d->table = this;
    d->to = to;
    d->what = std::move(what);
    d->node.deadline = when;
    d->node.fire = &ask_table::on_deadline;
    d->node.arg = d.get();
    const std::uint64_t id = add(q, fn, to, name, label);
    d->id = id;
    // In the slot before it is armed, so that whoever frees the slot frees
    // it. Unless the ask ended already (its rank's goodbye took it): then
    // there is nothing to time.
    const std::uint32_t idx = index_of(id);
    lock_.lock();
    const bool live = matches(idx, id) && slots_[idx].q == &q;
    if (live) slots_[idx].deadline = d.get();
    lock_.unlock();
    if (!live) return id;
    try {
        troupe::detail::timer_arm(d->node);
    } catch (...) {
        // Nothing armed: take the record back (unless a goodbye's scan took
        // the slot with it: the scan frees it) and end the ask unsent.
        lock_.lock();
        const bool mine = matches(idx, id) && slots_[idx].deadline == d.get();
        if (mine) slots_[idx].deadline = nullptr;
        lock_.unlock();
        if (!mine) (void)d.release();
        cancel(id);
        throw;
    }
    (void)d.release();  // the slot's now
    return id;
}

bool ask_table::find_by_reply(const void* reply, ask_seen& out) noexcept {
    if (!reply) return false;
    bool found = false;
    lock_.lock();
    for (const slot& s : slots_) {
        // Live only: an abandoned ask has nobody waiting for it.
        if (!s.q || s.label.reply != reply) continue;
        out.to = s.to;
        out.target = s.label.target;
        out.name = s.name;
        out.actor_type = s.label.actor_type;
        out.deadline = s.deadline != nullptr;
        found = true;
        break;
    }
    lock_.unlock();
    return found;
}

ask_table::completion ask_table::expire(std::uint64_t id) noexcept {
    const std::uint32_t idx = index_of(id);
    completion c;
    lock_.lock();
    if (matches(idx, id) && slots_[idx].q) {
        slot& s = slots_[idx];
        c.found = true;
        c.q = s.q;
        c.fn = s.fn;
        c.name = s.name;
        s.q = nullptr;
        s.abandoned = true;
        s.timed_out = true;    // the record stays: the slot's freer releases it
        begin_write(c, *c.q);  // under the lock: an abandon() that misses the slot sees it
    }
    lock_.unlock();
    if (c.q) {
        awaited_.fetch_sub(1, std::memory_order_seq_cst);
        timed_out_.fetch_add(1, std::memory_order_relaxed);
    }
    return c;
}

// The timer service's thread, under its lock: never blocks (the asks lock
// is a short spinlock, and failing the request fulfils a future).
void ask_table::on_deadline(troupe::detail::timer_node& n) noexcept {
    auto& d = *static_cast<ask_deadline*>(n.arg);
    completion c = d.table->expire(d.id);
    if (!c.q) return;  // answered, failed or abandoned first
    try {
        byte_buffer b;
        byte_writer w{b};
        reply_error_record e;
        e.code = error_code::timed_out;
        e.what = d.what;
        put_reply_error(w, e);
        byte_reader rd{b.data(), b.size()};
        c.fn(*c.q, frame_kind::reply_error, rd, d.to);
    } catch (...) {
        // No memory for the error, or the request was answered on this
        // rank already: nothing more to do (the slot is abandoned).
    }
}

bool ask_table::cancel(std::uint64_t id) noexcept {
    const std::uint32_t idx = index_of(id);
    lock_.lock();
    bool found = false;
    ask_deadline* d = nullptr;
    if (matches(idx, id) && slots_[idx].q) {
        d = std::exchange(slots_[idx].deadline, nullptr);
        slots_[idx].q = nullptr;
        slots_[idx].next_free = free_;
        free_ = idx + 1;
        found = true;
    }
    lock_.unlock();
    release(d);
    if (found) awaited_.fetch_sub(1, std::memory_order_seq_cst);
    return found;
}

bool ask_table::abandon(troupe::detail::request_tag& q, std::uint64_t id) noexcept {
    const std::uint32_t idx = index_of(id);
    lock_.lock();
    if (matches(idx, id) && slots_[idx].q == &q) {
        slots_[idx].q = nullptr;
        slots_[idx].abandoned = true;
        lock_.unlock();
        awaited_.fetch_sub(1, std::memory_order_seq_cst);
        return true;
    }
    // Either ended, or a taker has the slot and is writing the reply now
    // (it raised q's count under this lock, so we see it): wait for the end
    // of that write, which is short and never parks. The acquire load that
    // reads zero reads the taker's release decrement (or a later value in
    // its release sequence), so the destructor that follows sees the whole
    // write.
    lock_.unlock();
    while (writing(q)) std::this_thread::yield();
    return false;
}

ask_table::completion ask_table::take_to(int r) noexcept {
    completion c;
    lock_.lock();
    for (std::uint32_t idx = 0; idx < slots_.size(); ++idx) {
        const slot& s = slots_[idx];
        if ((s.q || s.abandoned) && s.to == r) {
            c = take_slot(idx);
            break;
        }
    }
    lock_.unlock();
    if (c.q) awaited_.fetch_sub(1, std::memory_order_seq_cst);
    return c;
}

void ask_table::count(std::size_t& live, std::size_t& abandoned) noexcept {
    live = abandoned = 0;
    lock_.lock();
    for (const slot& s : slots_) {
        if (s.q) ++live;
        else if (s.abandoned) ++abandoned;
    }
    lock_.unlock();
}

}  // namespace troupe::remote::detail
