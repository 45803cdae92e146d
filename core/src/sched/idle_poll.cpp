// Idle pollers (troupe/detail/idle_poll.hpp): a fixed table of slots that
// idle processors and actor workers call, and that a remover can wait out.
#include "troupe/detail/idle_poll.hpp"

#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "troupe/error.hpp"

namespace troupe::detail {

namespace idle_poll_impl {

std::atomic<int> registered{0};

namespace {

// One registration. `word` = 2 x (calls in progress) + present bit.
// Invariant: `p` is read only by a caller whose CAS raised the count while
// the present bit was set, and written only by add while the word is 0 (no
// caller, nothing present); the remover clears the bit, then waits for the
// count to drain, so once it returns no call of its poller runs or starts.
struct slot {
    std::atomic<unsigned> word{0};
    idle_poller p;
};
constexpr unsigned present = 1, one_call = 2;

slot slots[max_idle_pollers];
std::mutex registry_mutex;  // serialises add and remove (rare)
// Depth of poller calls on this kernel thread: a remove from inside a
// poller would wait for itself.
thread_local int in_poller = 0;

// Enters slot `s` if a poller is present; false if none is.
bool enter(slot& s) noexcept {
    unsigned w = s.word.load(std::memory_order_acquire);
    while (w & present) {
        // acquire: see the fields add wrote before it set the bit.
        if (s.word.compare_exchange_weak(w, w + one_call, std::memory_order_acquire,
                                         std::memory_order_acquire))
            return true;
    }
    return false;
}
// release: the call's effects happen before a remover sees the count drain.
void leave(slot& s) noexcept { s.word.fetch_sub(one_call, std::memory_order_release); }

}  // namespace

bool poll_all() noexcept {
    bool found = false;
    ++in_poller;
    for (slot& s : slots) {
        if (!enter(s)) continue;
        found |= s.p.poll(s.p.arg);
        leave(s);
    }
    --in_poller;
    return found;
}

void sleeping_all() noexcept {
    ++in_poller;
    for (slot& s : slots) {
        if (!enter(s)) continue;
        if (s.p.sleeping) s.p.sleeping(s.p.arg);
        leave(s);
    }
    --in_poller;
}

bool awaited_any() noexcept {
    bool any = false;
    ++in_poller;
    for (slot& s : slots) {
        if (!enter(s)) continue;
        any = any || (s.p.awaited && s.p.awaited(s.p.arg));
        leave(s);
    }
    --in_poller;
    return any;
}

}  // namespace idle_poll_impl

using namespace idle_poll_impl;

void add_idle_poller(const idle_poller& p) {
    if (!p.poll)
        throw std::invalid_argument("troupe: add_idle_poller: the poller has no poll function");
    std::lock_guard g{registry_mutex};
    for (slot& s : slots) {
        // 0: nothing present and no caller inside (a removed slot drained).
        if (s.word.load(std::memory_order_acquire) != 0) continue;
        s.p = p;
        s.word.store(present, std::memory_order_release);  // publishes the fields
        registered.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    throw std::length_error("troupe: add_idle_poller: " + std::to_string(max_idle_pollers) +
                            " idle pollers are registered already");
}

void remove_idle_poller(const idle_poller& p) noexcept {
    if (in_poller != 0) {
        report_misuse(
            "troupe: remove_idle_poller called from inside an idle poller (it would wait for "
            "its own call to end)");
        return;
    }
    std::lock_guard g{registry_mutex};
    for (slot& s : slots) {
        if (!(s.word.load(std::memory_order_acquire) & present)) continue;
        if (s.p.poll != p.poll || s.p.sleeping != p.sleeping || s.p.arg != p.arg ||
            s.p.awaited != p.awaited)
            continue;
        // Clear the bit: no call starts after this (enter needs it).
        s.word.fetch_and(~present, std::memory_order_acq_rel);
        registered.fetch_sub(1, std::memory_order_relaxed);
        // Wait out the calls in progress (acquire: their effects are ours).
        for (unsigned spins = 0; s.word.load(std::memory_order_acquire) != 0; ++spins) {
            if (spins < 64) continue;
            std::this_thread::yield();
        }
        return;
    }
}

}  // namespace troupe::detail
