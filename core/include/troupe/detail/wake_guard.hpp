#pragma once
/// Keeping a context alive across its wake (docs/core.md, "A wake's last
/// touch").
///
/// Every wake in troupe publishes something first (a grant, a done flag, a
/// lock's owner) and unparks the waiter after. A waiter that finds the
/// publication before it parks, or after a stray permit ended its park,
/// leaves without that unpark: it may finish its thread, whose context is
/// then freed (a user thread's descriptor on join, an OS thread's on exit)
/// while the waker is still about to read the context's state word.
///
/// The waker therefore *announces* the context in its kernel thread's wake
/// slot before the publication and withdraws it after the unpark
/// (`wake_guard`); a context's end (`wait_out_wakers`) waits while any slot
/// announces it. The announcement is sequenced before the publication, and
/// the end happens after the waiter saw the publication, so the end cannot
/// miss it; the withdrawal is a release store, so the unpark's reads happen
/// before the free. A guard spans no switch point, so the slot of the
/// kernel thread it started on is the one it ends on.
#include <atomic>

#include "troupe/context.hpp"

namespace troupe::detail {

/// One kernel thread's announcement. Slots are never freed: a thread's
/// slot is marked free (`taken` false) at its exit for a later thread.
struct wake_slot {
    std::atomic<const context*> target{nullptr};
    std::atomic<bool> taken{false};
    wake_slot* next = nullptr;  // written once, before the slot is published
};

/// The calling kernel thread's slot (taken on first use). nothrow: a slot
/// that cannot be allocated terminates, as an allocation failure inside a
/// wake has no caller to report to.
wake_slot& this_thread_wake_slot() noexcept;

/// Waits while any kernel thread announces `c` (a few instructions: an
/// announcement lasts one unpark). Called before a context's memory ends.
void wait_out_wakers(const context& c) noexcept;

/// Announces `c` for the guard's lifetime; nests (the outer announcement is
/// restored). Create it before the store that lets the waiter go; destroy
/// it after the unpark. nothrow.
class wake_guard {
public:
    explicit wake_guard(const context& c) noexcept
        : slot_(this_thread_wake_slot()), outer_(slot_.target.load(std::memory_order_relaxed)) {
        // Relaxed: the caller's publication comes after this store in
        // program order and is itself a release, so whoever frees `c` after
        // seeing that publication sees this announcement (or a later value).
        slot_.target.store(&c, std::memory_order_relaxed);
    }
    ~wake_guard() {
        // release: the unpark's reads of the context happen before the
        // free that wait_out_wakers lets through.
        slot_.target.store(outer_, std::memory_order_release);
    }
    wake_guard(const wake_guard&) = delete;
    wake_guard& operator=(const wake_guard&) = delete;

private:
    wake_slot& slot_;
    const context* outer_;
};

}  // namespace troupe::detail
