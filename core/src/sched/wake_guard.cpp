// Wake slots (troupe/detail/wake_guard.hpp): one per kernel thread that
// wakes, never freed, so wait_out_wakers can walk them without a lock
// while threads come and go.
#include "troupe/detail/wake_guard.hpp"

#include <algorithm>
#include <cstddef>
#include <thread>

namespace troupe::detail {
namespace {

// The first slots are static (a process rarely has more kernel threads
// that wake at once): no allocation on a thread's first wake, and none a
// leak check can count. Slots past them come from the heap onto a
// push-only list. Neither kind is ever freed, so wait_out_wakers walks
// both without a lock while threads come and go.
constexpr std::size_t fixed_count = 256;
wake_slot fixed_slots[fixed_count];
std::atomic<std::size_t> fixed_handed{0};  // fixed_slots[0, this) were handed out at least once
std::atomic<wake_slot*> overflow{nullptr};

[[gnu::tls_model("initial-exec")]] constinit thread_local wake_slot* tls_slot = nullptr;

// Gives the thread's slot back at its exit. A separate thread_local,
// touched only when the slot is taken, so the fast path reads a constinit
// pointer with no TLS guard.
struct slot_returner {
    wake_slot* slot = nullptr;
    ~slot_returner() {
        if (!slot) return;
        tls_slot = nullptr;
        // release: our last guard's withdrawal is ordered before the next
        // owner's first announcement (and its acquire on `taken`).
        slot->taken.store(false, std::memory_order_release);
    }
};
thread_local slot_returner tls_returner;

bool try_take(wake_slot& s) noexcept {
    bool expected = false;
    return !s.taken.load(std::memory_order_relaxed) &&
           s.taken.compare_exchange_strong(expected, true, std::memory_order_acquire);
}

std::size_t fixed_in_use() noexcept {
    return std::min(fixed_handed.load(std::memory_order_acquire), fixed_count);
}

[[gnu::cold, gnu::noinline]] wake_slot& take_slot() noexcept {
    wake_slot* s = nullptr;
    // Reuse a slot a finished thread gave back; its target is null (every
    // guard restores what it found, and the outermost found null).
    for (std::size_t i = 0, n = fixed_in_use(); i < n && !s; ++i)
        if (try_take(fixed_slots[i])) s = &fixed_slots[i];
    for (wake_slot* p = overflow.load(std::memory_order_acquire); p && !s; p = p->next)
        if (try_take(*p)) s = p;
    if (!s) {
        const std::size_t i = fixed_handed.fetch_add(1, std::memory_order_acq_rel);
        if (i < fixed_count) {
            s = &fixed_slots[i];
            s->taken.store(true, std::memory_order_relaxed);  // nobody else is handed slot i
        } else {
            s = new wake_slot;  // terminates on failure (noexcept)
            s->taken.store(true, std::memory_order_relaxed);
            s->next = overflow.load(std::memory_order_relaxed);
            // release: `next` and `taken` are visible to every walker that
            // finds the slot.
            while (!overflow.compare_exchange_weak(s->next, s, std::memory_order_release,
                                                   std::memory_order_relaxed)) {}
        }
    }
    tls_returner.slot = s;
    tls_slot = s;
    return *s;
}

void wait_out(const wake_slot& s, const context& c) noexcept {
    // acquire: pairs with the guard's withdrawal, so that waker's reads of
    // `c` happen before our caller frees it. An announcement lasts one
    // unpark on a running kernel thread: yield so it can end even if it
    // shares our core.
    while (s.target.load(std::memory_order_acquire) == &c) std::this_thread::yield();
}

}  // namespace

wake_slot& this_thread_wake_slot() noexcept {
    if (wake_slot* s = tls_slot) [[likely]]
        return *s;
    return take_slot();
}

void wait_out_wakers(const context& c) noexcept {
    // A slot handed out after our load of fixed_handed cannot announce c
    // yet in a way we must see: an announcement we must see was made
    // before the publication our caller saw, hence before that load.
    for (std::size_t i = 0, n = fixed_in_use(); i < n; ++i) wait_out(fixed_slots[i], c);
    for (wake_slot* p = overflow.load(std::memory_order_acquire); p; p = p->next) wait_out(*p, c);
}

}  // namespace troupe::detail
