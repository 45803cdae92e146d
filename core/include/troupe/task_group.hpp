#pragma once
/// A group of tasks in the style of Go's errgroup: spawn functions on user
/// threads, wait for all of them, get the first failure; after it, the
/// others are asked to stop.
///
///     troupe::task_group g;
///     for (auto& url : urls)
///         g.spawn([&, url](troupe::stop_token stop) { fetch(url, stop); });
///     g.wait();            // joins every task; rethrows the first exception
///
/// `spawn(f)` runs `f()` or, if it takes one, `f(stop_token)` on a new user
/// thread of the group's cluster. The first exception to escape a task is
/// kept and the group's stop is requested, so every task's token (and
/// `get_token()`) reports stop_requested() and blocking calls given it fail
/// with `cancelled`; later exceptions are dropped (as in errgroup, the
/// first error wins). Tasks may spawn more tasks into the same group.
///
/// `wait()` joins every task, including those spawned while it waits, and
/// then rethrows the first exception, if any. Called from inside one of
/// the group's own tasks, it skips the caller (instead of waiting for
/// itself for ever) and joins the other tasks it finds; tasks that another
/// wait() is joining at the same moment are not waited for, so a task that
/// must wait for its own children gives them a task_group of their own. Afterwards the group is
/// empty and may be used again; the next round gets a fresh stop state
/// (tokens handed out before stay stopped). The destructor joins like
/// wait() (it never throws); an exception no wait() collected is reported
/// on stderr, naming the group, like a thread's.
///
/// Works from user threads and OS threads alike. Cost per task: one user
/// thread (a pooled stack) and a small record; a finished task's stack is
/// returned to the pool by a later spawn or by wait().
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

#include "troupe/cluster.hpp"
#include "troupe/spinlock.hpp"
#include "troupe/stop_token.hpp"
#include "troupe/thread.hpp"

namespace troupe {

class task_group {
public:
    /// A group whose tasks run on `c` (default: the caller's cluster, see
    /// this_cluster()); `name` (not copied) names it in reports. Throws
    /// std::bad_alloc.
    explicit task_group(const char* name = nullptr);
    explicit task_group(cluster& c, const char* name = nullptr);
    task_group(const task_group&) = delete;
    task_group& operator=(const task_group&) = delete;
    /// Joins every task (as wait(), without throwing; see the class comment).
    ~task_group();

    /// Starts `f` (callable as `f(stop_token)` or `f()`) on a new user
    /// thread. Throws std::bad_alloc or std::system_error if no thread can
    /// be made (strong guarantee: nothing started, the group unchanged).
    /// Never blocks (may join a task that finished, to reuse its stack).
    template <class F>
    requires std::is_invocable_v < std::decay_t<F>
    &, stop_token > || std::is_invocable_v<std::decay_t<F>&> void spawn(F&& f) {
        record* r = new_record();
        try {
            r->t = thread(thread_attributes{0, cluster_, nullptr},
                          [this, r, fn = std::forward<F>(f)]() mutable noexcept {
                              run_task(r, [&] {
                                  if constexpr (std::is_invocable_v<decltype(fn)&, stop_token>)
                                      std::invoke(fn, r->token);
                                  else std::invoke(fn);
                              });
                          });
        } catch (...) {
            discard_record(r);
            throw;
        }
        link_record(r);
    }

    /// Joins every task (also those spawned meanwhile), then rethrows the
    /// first exception a task let escape, if any. Parks. Afterwards the
    /// group is empty, with a fresh stop state.
    void wait();

    /// Asks every task to stop (their tokens report it). nothrow.
    void request_stop() noexcept;
    /// The current round's token (the one tasks receive). nothrow.
    stop_token get_token() const noexcept;
    /// Tasks spawned and not yet joined (a snapshot).
    std::size_t size() const noexcept { return live_.load(std::memory_order_relaxed); }
    const char* name() const noexcept { return name_; }

private:
    struct record {
        thread t;
        stop_token token;
        std::atomic<bool> finished{false};
        record* next = nullptr;
    };

    template <class Body>
    void run_task(record* r, Body&& body) noexcept {
        try {
            body();
        } catch (...) {
            fail(std::current_exception());
        }
        // release: the task's writes before its finish are visible to a
        // reaper that sees the flag (it joins, which synchronises anyway).
        r->finished.store(true, std::memory_order_release);
    }
    // An unlinked record holding the round's token (may join finished
    // tasks first); link_record makes it the group's once its thread runs.
    record* new_record();
    void link_record(record* r) noexcept;
    void discard_record(record* r) noexcept;
    void fail(std::exception_ptr e) noexcept;
    // Joins and frees every record, repeating while tasks spawn more.
    void join_all() noexcept;

    cluster* cluster_;
    const char* name_;
    mutable spinlock lock_{"task_group"};
    stop_source stop_;            // under lock_ when replaced
    record* head_ = nullptr;      // under lock_
    std::size_t since_reap_ = 0;  // under lock_
    std::atomic<std::size_t> live_{0};
    std::exception_ptr first_;  // under lock_
};

}  // namespace troupe
