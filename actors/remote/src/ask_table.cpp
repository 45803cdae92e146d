// The asks awaiting replies (invariants in ask_table.hpp).
#include "ask_table.hpp"

#include <thread>

namespace troupe::remote::detail {

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
