#pragma once
/// User threads: callables running on their own stacks, scheduled M:N by the
/// processors of a cluster.
///
///     troupe::thread t{[](int n) { compute(n); }, 42};
///     t.join();                       // rethrows an exception escaping compute
///
/// A `thread` is joined when destroyed (like std::jthread). Stacks are mmap'd
/// with a guard page below them (an overflow faults instead of corrupting a
/// neighbour) and pooled for reuse. An exception escaping the callable is
/// stored and rethrown by `join()`; if the handle is destroyed instead, it is
/// reported on stderr naming the thread, and no other thread is affected.
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "troupe/cluster.hpp"
#include "troupe/context.hpp"
#include "troupe/stop_token.hpp"

namespace troupe {

/// Per-thread settings; every field has a working default.
struct thread_attributes {
    /// Usable stack bytes; 0 means defaults::core::stack_size (pooled).
    std::size_t stack_size = 0;
    /// Cluster to run on; nullptr means this_cluster().
    cluster* on = nullptr;
    /// Name used in error reports and dumps (not copied: it must outlive
    /// the thread, e.g. a string literal).
    const char* name = nullptr;
};

namespace detail {
// Allocates a stack and a descriptor with `size` bytes of aligned payload.
fiber* fiber_create(const thread_attributes& attrs, std::size_t size, std::size_t align,
                    void** payload);
// Makes the fiber ready. `invoke` runs the payload, then destroys it.
void fiber_start(fiber* f, void (*invoke)(void*));
// Blocks until the fiber `f` finished; clears `f`, frees the fiber and
// rethrows its exception if any. Throws (throw_join_error) if the caller
// is that fiber, leaving `f` as it was.
void fiber_join(fiber*& f);
// Throws std::system_error: invalid_argument (`self` false: nothing to
// join) or resource_deadlock_would_occur (`self`: a thread joining itself).
[[noreturn]] void throw_join_error(bool self);
// As fiber_join, but throws cancelled (the fiber still joinable) if `tok`
// is stopped first; returns the fiber's exception instead of throwing it.
// Throws (throw_join_error) if the caller is that fiber.
std::exception_ptr fiber_join_or_stop(fiber* f, const stop_token& tok);
// As fiber_join, but reports an exception on stderr instead of throwing.
void fiber_join_noexcept(fiber* f) noexcept;
context& fiber_context(fiber* f) noexcept;
void fiber_set_name(fiber* f, const char* name) noexcept;
/// this_thread::yield without the runtime's yield hook (block_hook.hpp):
/// for troupe's own brief spin-waits (a lock's holder a few instructions
/// from done), which may run inside that hook's work (an actor worker
/// handing out its staged sends takes mailbox locks) and must not re-enter
/// it. Nothrow, never parks.
void yield_now() noexcept;
}  // namespace detail

class thread {
public:
    /// An empty handle (not joinable).
    thread() noexcept = default;

    /// Starts `f(args...)` on this_cluster(). Throws std::bad_alloc or
    /// std::system_error if no stack can be mapped.
    template <class F, class... Args>
    requires std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...>
    explicit thread(F&& f, Args&&... args)
        : thread(thread_attributes{}, std::forward<F>(f), std::forward<Args>(args)...) {}

    /// Starts `f(args...)` on cluster `c`.
    template <class F, class... Args>
    requires std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...> thread(cluster& c, F&& f,
                                                                                Args&&... args)
        : thread(thread_attributes{0, &c, nullptr}, std::forward<F>(f),
                 std::forward<Args>(args)...) {}

    /// Starts `f(args...)` with explicit attributes.
    template <class F, class... Args>
    requires std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...> thread(
        const thread_attributes& attrs, F&& f, Args&&... args) {
        using payload = std::tuple<std::decay_t<F>, std::decay_t<Args>...>;
        void* storage = nullptr;
        fiber_ = detail::fiber_create(attrs, sizeof(payload), alignof(payload), &storage);
        try {
            ::new (storage) payload(std::forward<F>(f), std::forward<Args>(args)...);
        } catch (...) {
            detail::fiber_start(fiber_, nullptr);  // runs nothing, just finishes
            detail::fiber_join_noexcept(fiber_);
            fiber_ = nullptr;
            throw;
        }
        detail::fiber_start(fiber_, [](void* p) {
            auto* tup = static_cast<payload*>(p);
            struct destroy {
                payload* t;
                ~destroy() { t->~payload(); }
            } guard{tup};
            std::apply([](auto& fn, auto&... as) { std::invoke(std::move(fn), std::move(as)...); },
                       *tup);
        });
    }

    thread(thread&& o) noexcept : fiber_(std::exchange(o.fiber_, nullptr)) {}
    /// Joins the current thread (if any) first, then takes over `o`'s.
    thread& operator=(thread&& o) noexcept {
        if (this != &o) {
            if (fiber_) detail::fiber_join_noexcept(fiber_);
            fiber_ = std::exchange(o.fiber_, nullptr);
        }
        return *this;
    }

    /// Joins (see join_noexcept semantics: an escaped exception is reported).
    ~thread() {
        if (fiber_) detail::fiber_join_noexcept(fiber_);
    }

    /// Whether this handle owns a thread not yet joined.
    bool joinable() const noexcept { return fiber_ != nullptr; }

    /// Blocks until the thread finishes (parks the caller, user thread or OS
    /// thread alike). Rethrows the exception that escaped the thread's
    /// callable, if any. The handle is empty afterwards. As std::thread,
    /// in every build: throws std::system_error with
    /// std::errc::invalid_argument if the handle is not joinable (joined
    /// already, moved from, or empty), and
    /// std::errc::resource_deadlock_would_occur if the caller is the thread
    /// itself; the handle is then unchanged.
    void join() {
        if (!fiber_) [[unlikely]]
            detail::throw_join_error(false);
        detail::fiber_join(fiber_);
    }

    /// As join(), but throws `cancelled` if `tok` is stopped before the
    /// thread finished: the handle then still owns the thread (join again
    /// later; nothing changed). A stop already requested throws at once.
    /// Throws std::system_error as join() does for a handle that is not
    /// joinable or a thread joining itself (the handle unchanged).
    void join(const stop_token& tok) {
        if (!fiber_) [[unlikely]]
            detail::throw_join_error(false);
        std::exception_ptr e = detail::fiber_join_or_stop(fiber_, tok);
        fiber_ = nullptr;
        if (e) std::rethrow_exception(e);
    }

    /// Names the thread in dumps (troupe/dump.hpp) and in gdb's `info
    /// troupe-threads`. `name` is not copied: it must outlive the thread (a
    /// string literal). The handle must be joinable. Nothrow.
    void set_name(const char* name) noexcept { detail::fiber_set_name(fiber_, name); }

    /// The thread's context (valid until joined), e.g. for unpark.
    context& get_context() const noexcept { return detail::fiber_context(fiber_); }

private:
    detail::fiber* fiber_ = nullptr;
};

namespace this_thread {
/// Lets other ready user threads of this processor run; on an OS thread,
/// yields the kernel thread.
void yield() noexcept;
/// Blocks the caller for at least `d` (parks; a processor runs other work).
void sleep_for(std::chrono::nanoseconds d) noexcept;
/// Blocks the caller until `deadline` (never earlier: a stray unpark parks
/// again). Never throws: if the timer cannot be armed (allocation failure)
/// it yields until the deadline instead.
void sleep_until(std::chrono::steady_clock::time_point deadline) noexcept;
/// Names the calling thread (a user thread or an OS thread) in dumps and
/// in gdb's `info troupe-threads`. `name` is not copied: it must outlive
/// the thread (a string literal). Nothrow.
void set_name(const char* name) noexcept;
/// Whether the caller is a troupe user thread.
bool in_user_thread() noexcept;
/// The index (0-based, within its cluster) of the processor running the
/// calling user thread, or `not_on_processor` for an OS thread. The answer
/// may be stale as soon as the thread parks or yields (it may migrate).
std::size_t processor_index() noexcept;
inline constexpr std::size_t not_on_processor = ~std::size_t{0};
}  // namespace this_thread

}  // namespace troupe
