#pragma once
/// Fork-join on user threads: `fork_join` runs callables in parallel,
/// `parallel_for` splits a loop, both over the processors of the caller's
/// cluster, with work stealing and no thread (and no allocation) per task.
///
///     int fib(int n) {
///         if (n < 2) return n;
///         int a, b;
///         troupe::fork_join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
///         return a + b;
///     }
///
///     troupe::parallel_for(0, n, [&](int i) { out[i] = f(in[i]); });
///
/// A call made outside any parallel call (from an OS thread or a user
/// thread) sets up a *region*: the caller becomes its first worker, and at
/// the first fork the region starts one helper user thread per processor of
/// its cluster (one fewer when the caller is itself a user thread of that
/// cluster, whose processor it occupies). The cluster is the calling user
/// thread's; for an OS thread, the one an enclosing `lend_while_blocked`
/// names, else the default cluster. Calls made inside a task (nested
/// `fork_join`, `parallel_for` in a loop body) reuse the worker they run
/// on. A fork pushes a task, which lives on the forker's stack, on the
/// worker's own deque; the forker then runs its own part and takes the task
/// back and runs it inline unless an idle worker stole it meanwhile. A
/// forker whose task was stolen runs other tasks of the region while it
/// waits, then parks (a user thread frees its processor; an OS thread
/// lends itself to the cluster, as `lend_while_blocked` does, in the slot of
/// a sleeping processor if there is one, then sleeps).
/// Loops split lazily: a worker halves its remaining range only while its
/// deque is empty (someone took its work), so a loop nobody steals from
/// runs as a plain loop. The region, its helpers and their stacks are gone
/// when the outermost call returns. See docs/forkjoin.md.
///
/// Limits: recursion costs stack as ordinary recursion does (a task stolen
/// by a helper runs on the helper's stack, defaults::core::stack_size), but
/// a `fork_join` called with less than defaults::core::fork_join_stack_reserve
/// left on its stack continues on a fresh user-thread stack, so a recursion
/// may go deeper than one stack holds (a stack per segment: memory grows
/// with the depth, as any recursion's does; if no thread can be made there,
/// the call throws std::system_error or std::bad_alloc before running
/// anything). A deque holds defaults::core::fork_join_deque tasks, beyond
/// which forks run inline. A task that blocks on a troupe primitive parks
/// its worker (a user thread) like any user thread; the others go on. A
/// callable that busy-waits for another callable of the same call without
/// a troupe primitive relies on that one being stolen, which never happens
/// when the region has no helper (a 1-processor cluster called from one of
/// its user threads).
#include <concepts>
#include <cstddef>
#include <exception>
#include <iterator>
#include <ranges>
#include <tuple>
#include <type_traits>
#include <utility>

#include "troupe/detail/fork_join.hpp"

namespace troupe {

namespace detail::fj {

// A forked callable (a fork_join argument).
template <class F>
struct call_task : task {
    F* fn;
    explicit call_task(F& f) noexcept : fn(&f) {
        run = [](task& t, worker&) { (*static_cast<call_task&>(t).fn)(); };
    }
};

template <class T>
void run_keeping_first(T& fn, std::exception_ptr& first) noexcept {
    try {
        fn();
    } catch (...) {
        if (!first) first = std::current_exception();
    }
}

template <std::size_t... K, class F1, class... Rest>
void fork_join_on(worker& w, std::index_sequence<K...>, F1& f1, Rest&... rest) {
    constexpr std::size_t n = sizeof...(Rest);
    std::tuple<call_task<Rest>...> tasks(rest...);
    bool forked[n] = {};
    // Push the last first, so the second argument sits at the bottom and is
    // taken back first (reclaims must be in the reverse order of forks);
    // thieves take from the top, the last argument first.
    ((forked[n - 1 - K] = fork(w, std::get<n - 1 - K>(tasks))), ...);
    std::exception_ptr first;  // the exception of the lowest-numbered callable that threw
    run_keeping_first(f1, first);
    const auto settle = [&](auto& t, bool was_forked) noexcept {
        if (!was_forked || reclaim(w, t)) {
            // Ours to run, unless a callable before it already threw.
            if (!first) run_keeping_first(*t.fn, first);
        } else if (t.error && !first) {
            first = std::move(t.error);
        }
    };
    (settle(std::get<K>(tasks), forked[K]), ...);
    if (first) std::rethrow_exception(first);
}

// parallel_for's shared state: the body over a block [b, e) and the first
// exception. Lazy binary splitting: see run().
template <class I, class Body>
class loop {
public:
    loop(Body& body, std::size_t grain) noexcept : body_(body), grain_(grain) {}

    // Blocks are [grain, 2 * grain) long (one block if the whole range is
    // shorter): a range is split or cut only while at least 2 * grain long.
    void run(worker& w, I b, I e) noexcept {
        while (length(b, e) / 2 >= grain_) {
            if (failed_.load(std::memory_order_relaxed)) return;
            // Split only when every task we pushed has been taken: someone
            // is hungry. Otherwise a block at a time, checking between.
            if (w.tasks.owner_sees_empty()) {
                const I mid = advance(b, length(b, e) / 2);
                range_task rt(*this, mid, e);
                if (fork(w, rt)) {
                    run(w, b, mid);
                    if (reclaim(w, rt)) run(w, mid, e);
                    return;
                }
            }
            const I next = advance(b, grain_);
            block(b, next);
            b = next;
        }
        if (!failed_.load(std::memory_order_relaxed)) block(b, e);
    }

    // e - b and b + k without signed overflow (a range may span all of I).
    static std::size_t length(I b, I e) noexcept {
        using U = std::make_unsigned_t<I>;
        return static_cast<std::size_t>(static_cast<U>(static_cast<U>(e) - static_cast<U>(b)));
    }
    static I advance(I b, std::size_t k) noexcept {
        using U = std::make_unsigned_t<I>;
        return static_cast<I>(static_cast<U>(static_cast<U>(b) + static_cast<U>(k)));
    }

    void rethrow_if_failed() {
        if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(first_);
    }

private:
    struct range_task : task {
        loop* l;
        I b, e;
        range_task(loop& lp, I from, I to) noexcept : l(&lp), b(from), e(to) {
            run = [](task& t, worker& w) {
                auto& r = static_cast<range_task&>(t);
                r.l->run(w, r.b, r.e);
            };
        }
    };

    void block(I b, I e) noexcept {
        try {
            body_(b, e);
        } catch (...) {
            // The first to fail keeps its exception (release: the owner's
            // acquire in rethrow_if_failed sees first_); the rest are dropped.
            bool expected = false;
            if (claim_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
                first_ = std::current_exception();
                failed_.store(true, std::memory_order_release);
            }
        }
    }

    Body& body_;
    const std::size_t grain_;
    std::atomic<bool> claim_{false};
    std::atomic<bool> failed_{false};
    std::exception_ptr first_;
};

// The grain when the caller gave 0: enough blocks per worker to balance.
std::size_t auto_grain(const worker& w, std::size_t n) noexcept;

template <class I, class Body>
void parallel_blocks(I first, I last, Body& body, std::size_t grain) {
    if (!(first < last)) return;
    scope s;
    worker& w = s.self();
    loop<I, Body> l(body, grain ? grain : auto_grain(w, loop<I, Body>::length(first, last)));
    l.run(w, first, last);
    l.rethrow_if_failed();
}

}  // namespace detail::fj

/// Runs every callable (`fns()...`), potentially in parallel, and returns
/// when all have finished. The first runs on the caller; the others are
/// forked and run inline on return unless idle workers took them. Blocks
/// (parks) only while a callable taken by another worker is still running,
/// after helping with other tasks of the region.
///
/// Throws: if callables throw, the exception of the lowest-numbered one
/// that threw is rethrown once every callable that started has finished;
/// the others' exceptions are dropped, and a callable not started by the
/// time an earlier one's exception is known is not run at all. Also
/// std::bad_alloc (nothing has run) when a new region cannot be set up.
template <class... F>
requires(sizeof...(F) >= 1 && (std::is_invocable_v<F&> && ...)) void fork_join(F&&... fns) {
    detail::fj::scope s;
    if constexpr (sizeof...(F) == 1) {
        (fns(), ...);
    } else {
        detail::fj::worker& w = s.self();
        auto call = [&] {
            [&]<class F1, class... Rest>(F1& f1, Rest&... rest) {
                detail::fj::fork_join_on(w, std::index_sequence_for<Rest...>{}, f1, rest...);
            }(fns...);
        };
        // Deep recursion: go on on a fresh stack rather than overflow.
        if (detail::fj::stack_low(w)) [[unlikely]]
            detail::fj::on_fresh_stack(w, call);
        else call();
    }
}

/// Calls `fn(b, e)` on blocks [b, e) that together cover [first, last)
/// exactly once, in parallel; returns when all blocks have run. `grain`:
/// each block is at least `grain` and less than `2 * grain` indices long
/// (one block if the whole range is shorter than `grain`); 0 picks about
/// 32 blocks per worker. Use it when the body vectorises or
/// needs per-block setup; `parallel_for` is this with a loop inside.
///
/// Throws: the first exception (in time) thrown by a block, once every
/// block that started has finished; the rest are dropped. After a failure,
/// blocks not yet started are skipped (a running block finishes), so some
/// indices are never visited. Also std::bad_alloc (nothing has run) when a
/// new region cannot be set up.
template <std::integral B, std::integral E, class Fn>
requires std::is_invocable_v<Fn&, std::common_type_t<B, E>, std::common_type_t<B, E>>
void parallel_for_blocks(B first, E last, Fn&& fn, std::size_t grain = 0) {
    using I = std::common_type_t<B, E>;
    detail::fj::parallel_blocks<I>(static_cast<I>(first), static_cast<I>(last), fn, grain);
}

/// Calls `fn(i)` for every i in [first, last), in parallel; returns when
/// all calls have returned. Blocks of at least `grain` indices (0: about 32
/// blocks per worker) run sequentially on one worker. Exceptions as
/// parallel_for_blocks: the first (in time) is rethrown after the running
/// blocks finish, later ones are dropped, unstarted blocks are skipped.
template <std::integral B, std::integral E, class Fn>
requires std::is_invocable_v<Fn&, std::common_type_t<B, E>>
void parallel_for(B first, E last, Fn&& fn, std::size_t grain = 0) {
    using I = std::common_type_t<B, E>;
    auto body = [&fn](I b, I e) {
        for (I i = b; i < e; ++i) fn(i);
    };
    detail::fj::parallel_blocks<I>(static_cast<I>(first), static_cast<I>(last), body, grain);
}

/// Calls `fn(x)` for every element x of a random-access range (by
/// reference: the body may modify it), in parallel. Same grain, blocking and
/// exception rules as the index form.
template <std::ranges::random_access_range R, class Fn>
requires std::ranges::sized_range<R> && std::is_invocable_v<Fn&, std::ranges::range_reference_t<R>>
void parallel_for(R&& range, Fn&& fn, std::size_t grain = 0) {
    auto it = std::ranges::begin(range);
    using D = std::ranges::range_difference_t<R>;
    auto body = [&fn, &it](D b, D e) {
        for (D i = b; i < e; ++i) fn(it[i]);
    };
    detail::fj::parallel_blocks<D>(D{0}, static_cast<D>(std::ranges::size(range)), body, grain);
}

}  // namespace troupe
