#pragma once
// Internal: the pieces of fork-join (troupe/parallel.hpp) that its templates
// inline: a task, a worker's task deque, forking and reclaiming. The design
// is in docs/forkjoin.md; the out-of-line half is core/src/sched/fork_join.cpp.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>

#include "troupe/context.hpp"
#include "troupe/defaults/core.hpp"

namespace troupe::detail::fj {

class region;
struct root_state;
struct worker;

// A unit of forked work. It lives on its forker's stack: the forker does
// not return before it is reclaimed (popped back unrun) or finished by a
// thief, so no task is ever allocated.
struct task {
    enum : std::uint32_t { pending = 0, done = 1, waiting = 2 };

    void (*run)(task&, worker&) = nullptr;  // the work, on the worker running it; may throw
    context* joiner = nullptr;              // the forker: woken if it parked on `state`
    // pending -> done (a thief finished it), or pending -> waiting (the
    // forker parks) -> done (the thief unparks it). Only a stolen task's
    // state changes.
    std::atomic<std::uint32_t> state{pending};
    std::exception_ptr error;  // what a thief's run threw
};

// A fixed-capacity Chase-Lev work-stealing deque of task pointers. The owner
// pushes and pops at the bottom, thieves take from the top. Full: push
// fails and the owner runs the task itself (no task is lost or blocked).
// Orders are seq_cst where the algorithm needs a store-load fence (pop's
// bottom store / top load; steal's top load / bottom load), so the code is
// also correct under TSan, which does not model standalone fences.
class deque {
public:
    static constexpr std::int64_t capacity = defaults::core::fork_join_deque;
    static_assert((capacity & (capacity - 1)) == 0, "fork_join_deque must be a power of two");

    // Owner only. Returns false if full. `was_empty` says whether no task
    // was left in the deque as the owner last saw it (so the push may be
    // the only work around and idle workers should hear about it).
    bool push(task* t, bool& was_empty) noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        const std::int64_t top = top_.load(std::memory_order_acquire);
        if (b - top >= capacity) return false;
        was_empty = b == top;
        slots_[b & (capacity - 1)].store(t, std::memory_order_relaxed);
        // release: a thief that sees the new bottom (acquire) sees the slot
        // and everything the owner wrote into the task before.
        bottom_.store(b + 1, std::memory_order_release);
        return true;
    }

    // Owner only: the newest task, or nullptr if empty (or a thief won the
    // last one).
    task* pop() noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        // seq_cst store then seq_cst load: a thief either sees the lowered
        // bottom, or we see its raised top (the Dekker pair of Chase-Lev).
        bottom_.store(b, std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (t > b) {
            bottom_.store(b + 1, std::memory_order_relaxed);
            return nullptr;
        }
        task* x = slots_[b & (capacity - 1)].load(std::memory_order_relaxed);
        if (t == b) {
            // The last task: race the thieves for it on top.
            if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                              std::memory_order_relaxed))
                x = nullptr;
            bottom_.store(b + 1, std::memory_order_relaxed);
        }
        return x;
    }

    // Any thread: the oldest task, or nullptr (empty, or lost a race).
    task* steal() noexcept {
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        // acquire: pairs with push's release (the slot and the task's fields).
        const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        if (t >= b) return nullptr;
        task* x = slots_[t & (capacity - 1)].load(std::memory_order_relaxed);
        // The CAS claims index t; a slot is only rewritten once top passed it
        // (push checks b - top < capacity), so a won CAS read a live task.
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                          std::memory_order_relaxed))
            return nullptr;
        return x;
    }

    // Any thread: whether tasks appear to be queued (a hint).
    bool looks_empty() const noexcept {
        return bottom_.load(std::memory_order_seq_cst) <= top_.load(std::memory_order_seq_cst);
    }
    // Owner only, cheap: whether every task it pushed has been taken.
    bool owner_sees_empty() const noexcept {
        return bottom_.load(std::memory_order_relaxed) <= top_.load(std::memory_order_relaxed);
    }

private:
    alignas(64) std::atomic<std::int64_t> top_{0};
    alignas(64) std::atomic<std::int64_t> bottom_{0};
    alignas(64) std::atomic<task*> slots_[capacity] = {};
};

// One participant of a region: the caller that set it up (the root) or a
// helper user thread. Its context's fork-join slot points here while it
// runs tasks of the region.
struct worker {
    deque tasks;
    region* owner = nullptr;
    context* ctx = nullptr;
    bool solo = false;  // the region has no helpers: forks run inline
    // Below this address the stack of the context running the worker has
    // less than defaults::core::fork_join_stack_reserve left.
    const char* stack_limit = nullptr;
    std::uint32_t index = 0;         // in its region (0: the root)
    std::uint32_t participants = 1;  // workers of its region
    std::uint32_t rng = 1;
    // The region's sleep list (guarded by the region's lock; `asleep` is
    // also read by the sleeper itself, lock-free, after its park).
    worker* next_sleeper = nullptr;
    std::atomic<bool> asleep{false};
};

// The worker the calling context runs as, or nullptr (not inside a region).
worker* current_worker() noexcept;

// Out of line: tell sleeping helpers of w's region that w queued work.
void notify_work(worker& w) noexcept;
// Out of line: w's task `t` was stolen; run other tasks of the region
// while it is not done, then park until its thief finishes it.
void wait_stolen(worker& w, task& t) noexcept;

// Whether the caller's stack has less than the reserve left.
[[gnu::always_inline]] inline bool stack_low(const worker& w) noexcept {
    return static_cast<const char*>(__builtin_frame_address(0)) < w.stack_limit;
}

// Out of line: runs fn(arg) on a new user thread (a fresh stack) that
// takes over `w` for the call, and waits for it. fn must not throw.
// Throws std::bad_alloc or std::system_error (nothing ran) if no thread
// can be made.
void run_on_fresh_stack(worker& w, void (*fn)(void*), void* arg);

// Runs body() there, rethrowing what it throws.
template <class Body>
void on_fresh_stack(worker& w, Body& body) {
    struct call {
        Body* body;
        std::exception_ptr error;
    } c{&body, nullptr};
    run_on_fresh_stack(
        w,
        [](void* p) {
            auto* cp = static_cast<call*>(p);
            try {
                (*cp->body)();
            } catch (...) {
                cp->error = std::current_exception();
            }
        },
        &c);
    if (c.error) std::rethrow_exception(c.error);
}

// Queues `t` on w's deque; false if it must run inline (no helpers, or the
// deque is full). The caller must reclaim() it before leaving its scope.
inline bool fork(worker& w, task& t) noexcept {
    if (w.solo) return false;
    t.joiner = w.ctx;
    bool was_empty = false;
    if (!w.tasks.push(&t, was_empty)) return false;
    if (was_empty) notify_work(w);
    return true;
}

// After fork(w, t) returned true and every task forked since was reclaimed:
// true if `t` came back unrun (run it inline, or drop it); false if a thief
// ran it (it has finished when this returns; its exception is in t.error).
inline bool reclaim(worker& w, task& t) noexcept {
    task* x = w.tasks.pop();
    if (x == &t) return true;
    // Forks are strictly nested, so the deque's bottom is `t` unless a
    // thief took it (then the deque is empty from there up).
    wait_stolen(w, t);
    return false;
}

// The caller's place in a region for the duration of one top-level
// parallel call: the calling context's worker if it already runs inside a
// region (nested calls reuse it), else a new region rooted at the caller,
// torn down (helpers stopped and joined) by the destructor.
class scope {
public:
    scope() : w_(current_worker()) {
        if (!w_) make_root();
    }
    ~scope() {
        if (made_) tear_down();
    }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    worker& self() noexcept { return *w_; }

private:
    void make_root();           // throws std::bad_alloc
    void tear_down() noexcept;  // stops and joins the helpers, frees the region
    worker* w_;
    root_state* made_ = nullptr;  // the region this scope set up, if any
};

}  // namespace troupe::detail::fj
