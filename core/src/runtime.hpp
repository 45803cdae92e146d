#pragma once
// Internal: user-thread descriptors, processors and cluster state.
// See docs/architecture.md ("core runtime") for the design.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "troupe/cluster.hpp"
#include "troupe/context.hpp"
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

// What a fiber asks its scheduler to do once it is off its stack.
enum class post_action : std::uint8_t { none, park, yield, finish };

struct fiber : context {
    fiber() noexcept : context(kind::user_thread) {}

    fcontext_t fctx = nullptr;           // saved context while not running
    processor* last = nullptr;           // processor it last ran on
    cluster_impl* home = nullptr;        // cluster it belongs to
    fiber* ready_next = nullptr;         // ready-queue link
    stack_mapping stack;
    char* stack_low = nullptr;           // lowest usable address
    std::size_t stack_usable = 0;
    void (*invoke)(void*) = nullptr;
    void* payload = nullptr;
    std::exception_ptr error;
    // nullptr: running, no joiner; done_marker: finished; else: the joiner.
    std::atomic<context*> joiner{nullptr};
    const char* name = nullptr;
    bool pooled = false;
    void* asan_fake_stack = nullptr;
    void* tsan_fiber = nullptr;
    // Per-thread runtime state swapped in and out by run_fiber.
    eh_state eh;
    int saved_errno = 0;
};

inline context* const done_marker = reinterpret_cast<context*>(std::uintptr_t{1});

struct os_context : context {
    os_context() noexcept : context(kind::os_thread) {}
};

struct processor_counters {
    std::atomic<std::uint64_t> created{0}, switches{0}, steals{0}, sleeps{0};
};

class processor {
public:
    processor(cluster_impl& c, std::size_t index, int pin_pu);
    processor(const processor&) = delete;

    void start();
    void join_kernel_thread();

    // Appends `f` to the ready queue; false if this processor has retired.
    bool push(fiber* f) noexcept;
    fiber* pop() noexcept;
    fiber* try_steal_from() noexcept;  // pop from a victim, never waits
    // Wakes this processor if it sleeps.
    void wake() noexcept;
    bool sleeping() const noexcept { return sleep_word_.load(std::memory_order_seq_cst) == asleep; }
    std::size_t queued() const noexcept { return qsize_.load(std::memory_order_relaxed); }

    void request_retire() noexcept;
    void request_stop() noexcept;

    // Switching (called on the fiber's stack).
    [[noreturn]] static void fiber_entry_finish(fiber* self);
    static void switch_out(fiber* self, post_action a) noexcept;

    cluster_impl& owner;
    const std::size_t index;
    fiber* current = nullptr;
    processor_counters counters;

private:
    friend class cluster_impl;
    friend void resume_on(fiber* self, void* from_fctx, processor* p) noexcept;
    void run() noexcept;
    void run_fiber(fiber* f) noexcept;
    fiber* find_work() noexcept;
    fiber* idle() noexcept;

    enum : std::uint32_t { awake = 0, asleep = 1 };

    spinlock qlock_{"ready queue"};
    fiber* head_ = nullptr;
    fiber* tail_ = nullptr;
    bool retired_ = false;  // guarded by qlock_
    std::atomic<std::size_t> qsize_{0};
    std::atomic<std::uint32_t> sleep_word_{awake};
    std::atomic<bool> retire_{false};
    std::atomic<bool> stop_{false};
    int pin_pu_;
    std::thread kthread_;
    std::uint32_t rng_;

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
};

class cluster_impl {
public:
    explicit cluster_impl(const cluster_options& o);
    ~cluster_impl();

    void set_processor_count(std::size_t n);
    std::size_t processor_count() const noexcept { return active_.load(std::memory_order_acquire); }

    // Makes a fiber ready: to its last processor if it has one, else to the
    // caller's processor (when on this cluster) or round-robin.
    void schedule(fiber* f) noexcept;
    void schedule_new(fiber* f) noexcept;
    fiber* steal(processor& thief) noexcept;
    void wake_one_sleeper(processor* except) noexcept;
    bool any_work() const noexcept;

    void thread_started() noexcept { live_.fetch_add(1, std::memory_order_relaxed); }
    void thread_finished() noexcept;
    std::size_t live() const noexcept { return live_.load(std::memory_order_acquire); }

    cluster_statistics statistics() const noexcept;

    cluster* public_handle = nullptr;  // the cluster object owning this impl
    std::atomic<int> sleepers{0};
    // Pushes from threads that are not this cluster's processors (timer
    // thread, OS threads, other clusters) still running push()'s wake step.
    // The destructor waits for zero before freeing the processors.
    std::atomic<int> remote_pushes{0};
    std::atomic<int> spinners{0};
    const char* name;

private:
    processor* active_at(std::size_t i) const noexcept {
        return slots_[i].load(std::memory_order_acquire);
    }
    processor* pick() noexcept;
    void place(fiber* f, processor* p) noexcept;

    static constexpr std::size_t max_processors = 256;
    std::atomic<processor*> slots_[max_processors] = {};
    std::atomic<std::size_t> active_{0};
    std::atomic<std::size_t> round_robin_{0};
    std::vector<std::unique_ptr<processor>> all_;  // every processor ever made
    std::mutex resize_mutex_;
    bool pin_;
    std::atomic<std::size_t> live_{0};
    std::atomic<context*> shutdown_waiter_{nullptr};
};

processor* current_processor() noexcept;

}  // namespace troupe::detail
