#pragma once
// Internal: user-thread descriptors, processors and cluster state.
// See docs/architecture.md ("core runtime") for the design.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "troupe/cluster.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/block_hook.hpp"
#include "troupe/detail/fast_rng.hpp"
#include "troupe/detail/idle_group.hpp"
#include "troupe/detail/wake_guard.hpp"
#include "troupe/select.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/thread.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define TROUPE_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define TROUPE_TSAN 1
#endif

namespace troupe::detail {

using fcontext_t = void*;

class processor;
class cluster_impl;

// A mapped stack: [base, base + guard) is PROT_NONE, the rest usable.
struct stack_mapping {
    char* base = nullptr;
    std::size_t size = 0;  // whole mapping, guard included
};
stack_mapping stack_allocate(std::size_t usable);  // throws std::system_error
void stack_release(const stack_mapping& s) noexcept;
std::size_t page_size() noexcept;

// The C++ runtime's per-kernel-thread exception state (Itanium C++ ABI,
// `__cxa_get_globals()`): the stack of exceptions being handled and the
// count of exceptions in flight. libstdc++ and libc++abi both lay it out as
// these two words (ARM EABI adds a third, propagating, pointer). It belongs
// to whatever runs on the kernel thread, so every switch saves and restores
// it together with errno (see run_fiber and docs/exception-safety.md).
struct eh_state {
    void* caught = nullptr;
    unsigned int uncaught = 0;
#if defined(__ARM_EABI_UNWINDER__)
    void* propagating = nullptr;
#endif
};
// The running kernel thread's exception state.
eh_state* current_eh_state() noexcept;

// The user thread this kernel thread is running, or nullptr: set by
// processor::run_fiber around each switch into a fiber, so this_context()
// is one TLS load (it sits on every lock fast path) instead of asking the
// processor. constinit: no TLS wrapper call on access from other files.
[[gnu::tls_model("initial-exec")]] extern constinit thread_local context* tls_running;

// What a fiber asks its scheduler to do once it is off its stack.
enum class post_action : std::uint8_t { none, park, yield, finish };

struct fiber : context {
    fiber() noexcept : context(kind::user_thread) {}

    fcontext_t fctx = nullptr;     // saved context while not running
    processor* last = nullptr;     // processor it last ran on
    cluster_impl* home = nullptr;  // cluster it belongs to
    fiber* ready_next = nullptr;   // ready-queue link
    stack_mapping stack;
    char* stack_low = nullptr;  // lowest usable address
    std::size_t stack_usable = 0;
    void (*invoke)(void*) = nullptr;
    void* payload = nullptr;
    std::exception_ptr error;
    // nullptr: running, no joiner; done_marker: finished; else: the joiner.
    std::atomic<context*> joiner{nullptr};
    const char* name = nullptr;
    void* asan_fake_stack = nullptr;
    void* tsan_fiber = nullptr;
    // Per-thread runtime state swapped in and out by run_fiber.
    eh_state eh;
    int saved_errno = 0;
    // A runtime's hooks on this thread (troupe/detail/block_hook.hpp), or
    // nullptr; set only by the thread itself.
    const user_thread_hooks* hooks = nullptr;
    void* hooks_arg = nullptr;
};

inline context* const done_marker = reinterpret_cast<context*>(std::uintptr_t{1});
// A joiner that also waits for a stop (thread::join(stop_token)) stores
// its select node's address with this bit instead of its context: the
// finishing thread must win the node (the stop may have won it) before it
// wakes the joiner.
inline constexpr std::uintptr_t joiner_node_tag = 2;
/// The finishing side's wake of joiner `j` (its last touch of the join):
/// a plain joiner is unparked; a tagged node is woken if won, else granted
/// (the joiner, whose stop won, waits for that grant before it leaves).
inline void wake_joiner(context* j) noexcept {
    const auto bits = reinterpret_cast<std::uintptr_t>(j);
    if (!(bits & joiner_node_tag)) {
        unpark(*j);
        return;
    }
    auto* n = reinterpret_cast<select_node*>(bits & ~joiner_node_tag);
    if (n->try_claim()) n->wake();
    else n->grant();
}

/// The finishing side of a join: says done in `f`'s joiner slot and wakes
/// the joiner registered there, if any. A plain joiner may see `done` and
/// leave (and its thread end) before the unpark, so it is announced
/// (wake_guard) before the store that says done; the slot may gain a
/// joiner between our read and that store, hence the CAS loop. No joiner
/// yet means no wake to guard, and a tagged node's waiter is announced by
/// the node's own wake. After the store the joiner may free `f`: it is not
/// touched again.
inline void finish_join(fiber& f) noexcept {
    context* j = f.joiner.load(std::memory_order_relaxed);
    for (;;) {
        // acq_rel: release publishes the thread's last writes with `done`;
        // acquire reads the joiner's registration (its node, its context).
        if (j && !(reinterpret_cast<std::uintptr_t>(j) & joiner_node_tag)) {
            wake_guard g{*j};
            if (f.joiner.compare_exchange_weak(j, done_marker, std::memory_order_acq_rel,
                                               std::memory_order_relaxed)) {
                unpark(*j);
                return;
            }
        } else if (f.joiner.compare_exchange_weak(j, done_marker, std::memory_order_acq_rel,
                                                  std::memory_order_relaxed)) {
            if (j) wake_joiner(j);
            return;
        }
    }
}

struct os_context : context {
    constexpr os_context() noexcept : context(kind::os_thread) {}
    // Adaptive park spin (touched only by this OS thread): recent polls a
    // wake took, and how often a full-length probe runs while spinning
    // does not pay.
    int spin_estimate = 0;
    unsigned probe_gap = 16;
    unsigned parks_since_probe = 0;
    long tid = 0;  // the kernel's thread id, set when the registry links it in
};

struct processor_counters {
    std::atomic<std::uint64_t> created{0}, switches{0}, steals{0}, sleeps{0}, handoffs{0};
};

// A monotonic clock for idle paths only (never on a hand-off fast path).
inline std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Run-time scheduling settings of one cluster (resolved cluster_options).
struct schedule_settings {
    std::int64_t idle_spin_ns;      // longest idle spin before sleeping
    std::int64_t handoff_grace_ns;  // how long a hand-off is reserved for its waker's processor
    std::int64_t handoff_watch_ns;  // longest timed sleep of a processor watching hand-offs
    unsigned handoff_streak;        // hand-offs run in a row before the queue gets a turn
    std::int64_t held_look_ns;      // first look of a processor whose slot is held (0: never)
};

class processor {
public:
    processor(cluster_impl& c, std::size_t index, int pin_pu);
    processor(const processor&) = delete;

    void start();
    void join_kernel_thread();
    // Makes a retired, joined processor ready to start again (same slot).
    void reset_after_retire() noexcept;

    // Appends `f` to the ready queue; false if this processor has retired.
    // Runs the wake rule (idle_group::wake_one).
    bool push(fiber* f, bool from_yield = false) noexcept;
    // Called on this processor's own kernel thread only: `f` runs next here
    // (a hand-off from the thread that woke it); the previous hand-off, if
    // any, moves to the back of the queue.
    void hand_off(fiber* f) noexcept;

    void request_retire() noexcept;
    void request_stop() noexcept;

    // Lending the slot (core/src/sched/lending.cpp): an OS thread blocked
    // in park() that took this processor's slot while its own kernel
    // thread sleeps (idle_group::take) runs the slot on the calling kernel
    // thread until `waiter` has a banked permit (then it keeps the slot,
    // held: true) or finds no work within its spin (then it gives the slot
    // back: false). Only the slot's taker calls these.
    bool lend(context& waiter) noexcept;
    // A held slot: take it back from the lender's side (resume) and give
    // it back to the processor (no-op if it was retaken meanwhile).
    void release_hold() noexcept;
    // A held slot run again by its lender (held -> lent); false if retaken.
    bool resume_hold() noexcept;

    // Switching (called on the fiber's stack).
    [[noreturn]] static void fiber_entry_finish(fiber* self);
    static void switch_out(fiber* self, post_action a) noexcept;

    cluster_impl& owner;
    const std::size_t index;
    fiber* current = nullptr;
    processor_counters counters;
    // For dumps: its ready-queue length, whether it is asleep (and `shown`
    // below: the fiber it runs).
    std::size_t queue_length() const noexcept { return qsize_.load(std::memory_order_relaxed); }
    bool asleep() const noexcept;
    // Its slot is lent to (or held by) an OS thread while its own kernel
    // thread sleeps; its own thread sleeps past its re-check (a lender may
    // take the slot). Snapshots, for dumps and tests.
    bool lent() const noexcept;
    bool dormant() const noexcept;

private:
    friend class cluster_impl;
    friend void resume_on(fiber* self, void* from_fctx, processor* p) noexcept;
    void run() noexcept;
    void run_fiber(fiber* f) noexcept;
    // Closes the ready queue and hands its threads and the hand-off slot's
    // to the cluster (processor.cpp: the queue-retirement invariant).
    void close_queue() noexcept;
    fiber* pop() noexcept;
    fiber* take_local() noexcept;
    fiber* steal_queued_from(processor& victim) noexcept;
    fiber* steal_handoff_from(processor& victim, std::int64_t now) noexcept;
    fiber* find_work(bool steal_handoffs) noexcept;
    fiber* idle() noexcept;
    bool handoff_pending_elsewhere() const noexcept;
    // idle()'s untimed sleep: the slot may be lent meanwhile (lending.cpp).
    void sleep_lendable() noexcept;
    // The lender's give-back: the slot is the processor's again (dormant),
    // and what relied on it being busy is re-checked.
    void give_back() noexcept;
    bool leaving() const noexcept {
        return retire_.load(std::memory_order_seq_cst) || stop_.load(std::memory_order_seq_cst);
    }

    spinlock qlock_{"ready queue"};
    fiber* head_ = nullptr;
    fiber* tail_ = nullptr;
    bool retired_ = false;  // guarded by qlock_
    std::atomic<std::size_t> qsize_{0};
    // The hand-off slot (Go's runnext): written by this kernel thread
    // (exchange), taken by it (exchange) or by a thief (CAS) once the same
    // placement (same handoff_seq_) has waited for the grace period.
    std::atomic<fiber*> runnext_{nullptr};
    std::atomic<std::uint32_t> handoff_seq_{0};  // bumped by each hand_off (owner only)
    unsigned streak_ = 0;                        // hand-offs run in a row
    // This processor in its cluster's idle group (sleep word, spinner count).
    idle_group::member idle_;
    // Bumped by each lender that takes or resumes the slot; its sleeping
    // thread compares it between two looks at a held slot.
    std::atomic<std::uint32_t> lend_epoch_{0};
    std::atomic<bool> retire_{false};
    std::atomic<bool> stop_{false};
    int pin_pu_;
    std::thread kthread_;
    detail::fast_rng rng_;           // find_work's first victim
    std::int64_t spin_estimate_ns_;  // adaptive idle spin: recent time-to-work
    std::int64_t watch_ns_ = 0;      // current timed sleep while watching hand-offs
    // A thief's last look at each victim's hand-off slot.
    struct handoff_seen {
        std::uint32_t seq = 0;
        std::int64_t at = -1;
    };
    std::unique_ptr<handoff_seen[]> seen_;

public:
    // Scheduler-side context state, touched only by this kernel thread and by
    // the fiber it is running (which runs on this kernel thread).
    fcontext_t sched_fctx = nullptr;
    post_action action = post_action::none;
    void* sched_stack_bottom = nullptr;
    std::size_t sched_stack_size = 0;
    void* sched_fake_stack = nullptr;
    void* tsan_self = nullptr;
    eh_state* eh_ = nullptr;  // this kernel thread's exception state
    int* errno_ = nullptr;    // and its errno
    // For dumps: the fiber it runs (relaxed; set and cleared around each
    // switch in run_fiber). Last, so the hot fields above keep their places.
    std::atomic<fiber*> shown{nullptr};
};

class cluster_impl {
public:
    explicit cluster_impl(const cluster_options& o);
    ~cluster_impl();

    void set_processor_count(std::size_t n);
    std::size_t processor_count() const noexcept { return active_.load(std::memory_order_acquire); }

    // Makes an unparked fiber ready. From a processor of this cluster: a
    // hand-off (it runs next there); otherwise its last processor, or any.
    void make_ready(fiber* f) noexcept;
    void make_ready_traced(fiber* f) noexcept;  // make_ready, recording the trace's wake
    // make_ready from an OS thread holding a slot of this cluster: onto
    // that slot's queue; false if it holds none here.
    bool ready_on_held_slot(fiber* f) noexcept;
    // Makes a fiber ready on its last processor (or any active one).
    void schedule(fiber* f) noexcept;
    void schedule_new(fiber* f) noexcept;

    void thread_started() noexcept { live_.fetch_add(1, std::memory_order_relaxed); }
    void thread_finished() noexcept;
    std::size_t live() const noexcept { return live_.load(std::memory_order_acquire); }

    cluster_statistics statistics() const noexcept;

    cluster* public_handle = nullptr;  // the cluster object owning this impl
    // The active processors as an idle group (spinners carry the duty to
    // find work): its wake rule runs after every push and hand-off. Member
    // i is processor i; membership follows set_processor_count.
    idle_group idlers;
    // Pushes from threads that are not this cluster's processors (timer
    // thread, OS threads, other clusters) still running push()'s wake step.
    // The destructor waits for zero before freeing the processors.
    std::atomic<int> remote_pushes{0};
    // Threads created from outside the cluster's processors.
    std::atomic<std::uint64_t> created_outside{0};
    const char* name;
    const schedule_settings settings;

    static constexpr std::size_t max_processors = 256;
    // For an OS thread that lends its kernel thread while blocked
    // (lending.cpp): the slot of an active processor whose own kernel
    // thread sleeps past its re-check, taken (idle_group::take); nullptr
    // if every processor is awake.
    processor* take_slot() noexcept;
    processor* active_at(std::size_t i) const noexcept {
        return slots_[i].load(std::memory_order_acquire);
    }

private:
    processor* pick() noexcept;
    void place(fiber* f, processor* p) noexcept;
    void lock_resize() noexcept;
    void unlock_resize() noexcept;

    std::atomic<processor*> slots_[max_processors] = {};
    std::atomic<std::size_t> active_{0};
    std::atomic<std::size_t> round_robin_{0};
    // Every processor ever made, by index; an entry never changes once
    // published (made_ grows with release), so statistics() reads it
    // without the resize lock. A retired processor is restarted when the
    // cluster grows again.
    std::unique_ptr<processor> all_[max_processors];
    std::atomic<std::size_t> made_{0};
    // Resize lock: a flag taken with yield(), so a user thread waiting for it
    // (or holding it while it migrates off a retiring processor) never holds
    // a kernel thread-bound mutex.
    std::atomic<bool> resizing_{false};
    bool pin_;
    std::atomic<std::size_t> live_{0};
    std::atomic<context*> shutdown_waiter_{nullptr};
};
processor* current_processor() noexcept;
// The user thread running on this kernel thread, or nullptr (an OS thread).
fiber* current_fiber() noexcept;
// The calling OS thread's yield hook (set_yield_hook), if any (context.cpp).
void run_yield_hook() noexcept;
// Sets what current_processor() returns on this kernel thread (a lender
// running a processor's slot).
void set_current_processor(processor* p) noexcept;
// park() on an OS thread, before it spins and sleeps: if the thread lends
// its kernel thread (troupe::lend_while_blocked), runs ready user threads of
// that cluster in a processor's slot (the one it holds, else one whose
// processor sleeps) until `self` has a banked permit or nothing is ready.
void lend_kernel_thread(context& self) noexcept;
// The slot this OS thread holds between its waits (lending.cpp), or nullptr.
processor* held_slot() noexcept;
// The OS thread's park spin limit (set_park_spin_policy's max_spins): how
// long a lender spins in a slot with no work before it gives it back.
int park_spin_limit() noexcept;
// The cluster this OS thread lends itself to (the innermost live
// troupe::lend_while_blocked), or nullptr.
cluster_impl* lending_to() noexcept;

// Called on a fiber's stack right after it (re)gains the CPU from processor
// `p`, whose scheduler context is `from_fctx` (processor_switch.cpp).
void resume_on(fiber* self, void* from_fctx, processor* p) noexcept;

}  // namespace troupe::detail
