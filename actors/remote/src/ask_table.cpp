// The asks awaiting replies (invariants in ask_table.hpp).
#include "ask_table.hpp"

#include <thread>

namespace troupe::remote::detail {

std::uint64_t ask_table::add(troupe::detail::request_tag& q, ask_complete_fn fn, int to,
                             std::string_view name) {
    lock_.lock();
    std::uint32_t idx;
    if (free_ != 0) {
        idx = free_ - 1;
        free_ = slots_[idx].next_free;
    } else {
        try {
            slots_.emplace_back();
        } catch (...) {
            lock_.unlock();
            throw;
        }
        idx = static_cast<std::uint32_t>(slots_.size() - 1);
    }
    slot& s = slots_[idx];
    s.q = &q;
    s.fn = fn;
    s.to = to;
    s.name = name;
    ++s.generation;
    const std::uint64_t id = (std::uint64_t{s.generation} << 32) | (idx + 1);
    lock_.unlock();
    // seq_cst: the caller's Dekker pair with a rank's goodbye (it fills the
    // slot, then loads the rank's state; the goodbye stores the state, then
    // scans with take_to) needs the fill ordered before that load.
    awaited_.fetch_add(1, std::memory_order_seq_cst);
    return id;
}

bool ask_table::cancel(std::uint64_t id) noexcept {
    const std::uint32_t idx = index_of(id);
    lock_.lock();
    bool found = false;
    if (matches(idx, id) && slots_[idx].q) {
        slots_[idx].q = nullptr;
        slots_[idx].next_free = free_;
        free_ = idx + 1;
        found = true;
    }
    lock_.unlock();
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
    // (it set completing_ under this lock): wait for the end of that write,
    // which is short and never parks. Acquire on every load, and every
    // store to completing_ is a release: whichever value we read (nullptr
    // after the write, or a later ask's request) was stored after the write
    // into `q` ended, so the destructor that follows sees all of it.
    const bool writing = completing_.load(std::memory_order_acquire) == &q;
    lock_.unlock();
    if (writing)
        while (completing_.load(std::memory_order_acquire) == &q) std::this_thread::yield();
    return false;
}

ask_table::completion ask_table::take_slot(std::uint32_t idx) noexcept {
    slot& s = slots_[idx];
    completion c;
    c.found = true;
    c.q = s.q;
    c.fn = s.fn;
    c.name = s.name;
    s.q = nullptr;
    s.abandoned = false;
    s.next_free = free_;
    free_ = idx + 1;
    if (c.q) {
        // Under the lock: an abandon() that misses the slot sees this.
        completing_.store(c.q, std::memory_order_release);
        c.table_ = this;
    }
    return c;
}

ask_table::completion ask_table::take(std::uint64_t id) noexcept {
    const std::uint32_t idx = index_of(id);
    completion c;
    lock_.lock();
    if (matches(idx, id) && (slots_[idx].q || slots_[idx].abandoned)) c = take_slot(idx);
    lock_.unlock();
    // An abandoned ask was uncounted when it was given up.
    if (c.q) awaited_.fetch_sub(1, std::memory_order_seq_cst);
    return c;
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

void ask_table::completion::done() noexcept {
    if (!table_) return;
    // Release: abandon() reading this is ordered after the write into q.
    table_->completing_.store(nullptr, std::memory_order_release);
    table_ = nullptr;
}

bool ask_table::pending(std::uint64_t id) noexcept {
    if (!lock_.try_lock()) return true;  // busy: ask again on the next check
    const std::uint32_t idx = index_of(id);
    const bool live = matches(idx, id) && slots_[idx].q != nullptr;
    lock_.unlock();
    return live;
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
