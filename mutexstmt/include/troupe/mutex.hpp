#pragma once
/// The mutex statement: hold several locks for one scope, taken in a single
/// global order so that scopes naming the same locks in any order never
/// deadlock.
///
///     TROUPE_MUTEX(from.m, to.m) {                  // statement form
///         from.balance -= amount;
///         to.balance += amount;
///     }
///     troupe::scoped_mutex g{a, b, c};               // RAII guard, held while g lives
///     int sum = troupe::mutex(a, b)([&] { return x + y; });   // lambda form
///
///     std::vector<std::mutex*> set = accounts_of(order);     // run-time set
///     TROUPE_MUTEX(set) { ... }                      // (reorders `set` in place)
///
/// Any number of locks of any mix of `lockable` types (std::mutex,
/// std::recursive_mutex, every troupe lock, `troupe::sout`, user types with
/// lock()/unlock(); a `lock_ref` stands for the lock it names). An empty
/// lock list does not compile: it would protect nothing. This header needs only the standard
/// library; it calls nothing but the locks' own lock() and unlock(), so it works the same from
/// troupe user threads, OS threads and actor behaviours.
///
/// Order and cost. Locks are acquired in ascending address order. The
/// addresses are sorted by a branch-free sorting network for 2 to 8 locks
/// (1, 3, 5, 9, 12, 16, 19 compare-exchanges: the fewest known), by
/// insertion sort beyond (for a lock list, written out as a branch-free
/// network of n(n-1)/2 compare-exchanges). A lock named more than once is acquired once
/// (so a non-recursive lock may be named twice). One lock costs exactly its
/// lock() and unlock(); the guard is one pointer. Locks of one type are
/// called directly; a mix of types costs one indirect call per lock() and
/// unlock(). No allocation.
///
/// Release. The locks are released in reverse order on every way out of the
/// scope: its end, `return`, `break`, `continue`, `goto`, an exception. If
/// the k-th lock() throws, the k-1 locks already taken are released and the
/// exception propagates; the body does not run. unlock() must not throw.
///
/// `break` and `continue`. TROUPE_MUTEX is an `if` statement inside, not a
/// loop: in its body, `break` and `continue` act on the enclosing loop or
/// switch exactly as in a plain `{ ... }` block (and in the Cforall
/// statement), releasing the locks on the way out. A for-once loop would
/// have swallowed them silently; use `return` from a lambda form, or an
/// ordinary `if`, to leave only the critical section. `if (c) TROUPE_MUTEX(l)
/// f(); else g();` pairs the `else` with `if (c)`, as it reads.
///
/// Deadlock guarantee. Among all users of the statement (any form, any
/// threads, any overlapping sets of locks), acquisition never deadlocks and
/// never livelocks: every scope waits for its locks one by one in the same
/// global order (by address; objects sharing an address, such as a struct
/// and its first member named through different types, by type) and never
/// backs off and retries, unlike std::scoped_lock's try-and-rotate. Limits:
///  - Manual locking of the same locks out of that order (lock(),
///    std::lock_guard, std::scoped_lock) can still deadlock with a scope:
///    thread 1 locks b then a by hand while thread 2 runs TROUPE_MUTEX(a, b).
///  - Nested scopes are not covered: a scope opened while its thread already
///    holds locks takes its own after those, outside the global order, so
///    TROUPE_MUTEX(a) { TROUPE_MUTEX(b) ... } against the same nesting with a
///    and b exchanged can deadlock. Name all the locks in one scope. (This is
///    the nested monitor problem; std::scoped_lock has it too.)
///  - The order is only as stable as the addresses: a lock must neither move
///    nor die while any scope may name it.
///  - In a troupe user thread, holding a lock that blocks or spins without
///    parking (std::mutex, spinlock) while waiting for one that parks can
///    stall that processor, as with any such mix (see troupe/spinlock.hpp).
/// Fairness is the locks' own; the statement adds no waiting of its own.
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <ranges>
#include <span>
#include <type_traits>
#include <utility>

#include "troupe/detail/lock_order.hpp"
#include "troupe/lockable.hpp"

namespace troupe {

namespace detail {
template <class First, class...>
struct first_of {
    using type = First;
};

// How scoped_mutex<Ls...> holds its locks: plain pointers (called directly)
// when all have one type, type-erased refs when they differ. A lock_ref
// argument is copied, so that the lock it names is what gets ordered.
template <class... Ls>
using handle_for = std::conditional_t<
    (std::is_same_v<typename first_of<Ls...>::type, Ls> && ...) &&
        !std::is_same_v<std::remove_cv_t<typename first_of<Ls...>::type>, lock_ref>,
    typename first_of<Ls...>::type*, lock_ref>;

template <class E, class L>
inline E handle_of(L& l) noexcept {
    if constexpr (std::is_same_v<E, lock_ref>) {
        return lock_ref{l};  // wraps l, or copies it if l is a lock_ref
    } else {
        return std::addressof(l);
    }
}
}  // namespace detail

/// RAII form: acquires `ls...` in address order on construction and
/// releases them in reverse when destroyed. `troupe::scoped_mutex g{a, b};`
/// deduces the types. Blocks in the locks' lock(); throws what they throw
/// (having released the ones taken). Neither copyable nor movable.
template <lockable... Ls>
requires(sizeof...(Ls) > 0) class [[nodiscard]] scoped_mutex {
public:
    /// Number of locks named (before removing duplicates).
    static constexpr std::size_t size = sizeof...(Ls);

    explicit scoped_mutex(Ls&... ls) : locks_{detail::handle_of<handle>(ls)...} {
        detail::sort_fixed<size>(locks_.data());
        detail::acquire_fixed<size>(locks_.data());
    }
    ~scoped_mutex() { detail::release_fixed<size>(locks_.data()); }

    scoped_mutex(const scoped_mutex&) = delete;
    scoped_mutex& operator=(const scoped_mutex&) = delete;

private:
    using handle = detail::handle_for<Ls...>;
    std::array<handle, size> locks_;
};

/// A contiguous range of lock handles whose size is known only at run time:
/// pointers to one lockable type (`std::vector<std::mutex*>`, `L* arr[n]`),
/// or `lock_ref`s for mixed types. Elements must be modifiable: the
/// statement sorts them in place, which is how it needs no allocation.
template <class R>
concept lock_range = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    detail::lock_handle<std::ranges::range_value_t<R>> &&
    !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

/// RAII form over a run-time set of locks: sorts `locks` in place (address
/// order), acquires each distinct lock once, and releases them in reverse
/// when destroyed. The same guarantees as scoped_mutex; an empty set locks
/// nothing. `locks` must outlive the guard and stay unmodified while it
/// lives. Cost: the sort (a network up to 8, insertion sort beyond).
template <detail::lock_handle E>
class [[nodiscard]] scoped_mutex_range {
public:
    explicit scoped_mutex_range(std::span<E> locks) : locks_(locks) {
        detail::sort_handles(locks_.data(), locks_.size());
        detail::acquire_sorted(locks_.data(), locks_.size());
    }
    ~scoped_mutex_range() { detail::release_sorted(locks_.data(), locks_.size()); }

    scoped_mutex_range(const scoped_mutex_range&) = delete;
    scoped_mutex_range& operator=(const scoped_mutex_range&) = delete;

private:
    std::span<E> locks_;
};

template <lock_range R>
scoped_mutex_range(R&&) -> scoped_mutex_range<std::ranges::range_value_t<R>>;

/// Lambda form: `troupe::mutex(a, b)(f)` holds a and b while it calls `f()`
/// and returns what f returns (the value is built before the locks are
/// released; a returned reference is the caller's to use after release).
/// The object returned by mutex() refers to the locks; use it at once.
template <lockable... Ls>
requires(sizeof...(Ls) > 0) [[nodiscard]] auto mutex(Ls&... ls) noexcept {
    return [... ps = std::addressof(ls)]<class F>(F&& f) -> decltype(auto) {
        scoped_mutex<Ls...> held{*ps...};
        return std::invoke(std::forward<F>(f));
    };
}

/// Lambda form over a run-time set (see scoped_mutex_range).
template <lock_range R>
requires(!lockable<std::remove_reference_t<R>>) [[nodiscard]] auto mutex(R&& locks) noexcept {
    using E = std::ranges::range_value_t<R>;
    return [set = std::span<E>(std::ranges::data(locks), std::ranges::size(locks))]<class F>(
               F&& f) -> decltype(auto) {
        scoped_mutex_range<E> held{set};
        return std::invoke(std::forward<F>(f));
    };
}

namespace detail {
// What TROUPE_MUTEX(...) declares: a guard for a lock list or a range.
template <lockable... Ls>
requires(sizeof...(Ls) > 0) scoped_mutex<Ls...> make_scope(Ls&... ls) {
    return scoped_mutex<Ls...>{ls...};
}
template <lock_range R>
requires(!lockable<std::remove_reference_t<R>>)
    scoped_mutex_range<std::ranges::range_value_t<R>> make_scope(R& locks) {
    return scoped_mutex_range<std::ranges::range_value_t<R>>{locks};
}
}  // namespace detail

}  // namespace troupe

#define TROUPE_MUTEX_CAT2_(a, b) a##b
#define TROUPE_MUTEX_CAT_(a, b) TROUPE_MUTEX_CAT2_(a, b)

/// Statement form: `TROUPE_MUTEX(l1, l2, ...) statement` holds the locks
/// while `statement` runs (see the header comment for order, release,
/// `break`/`continue` and the deadlock guarantee). With a single argument
/// that is a `lock_range`, the run-time form. The guard is the init-statement
/// of an `if` whose body is the user's statement as its `else` branch, so the
/// statement is not a loop and a following `else` cannot attach to it.
#define TROUPE_MUTEX(...)                                                           \
    if ([[maybe_unused]] auto TROUPE_MUTEX_CAT_(troupe_mutex_scope_, __COUNTER__) = \
            ::troupe::detail::make_scope(__VA_ARGS__);                              \
        false) {                                                                    \
    } else
