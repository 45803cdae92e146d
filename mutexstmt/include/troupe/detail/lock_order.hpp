#pragma once
// Internals of the mutex statement: putting lock handles in address order,
// then acquiring and releasing them. A handle is `L*` (every lock of one
// type) or `lock_ref` (mixed types). See troupe/mutex.hpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "troupe/lockable.hpp"

// The unrolled steps below must inline into the caller so that the handles
// stay in registers; compilers otherwise give up on the nested expansions.
#if defined(__GNUC__) || defined(__clang__)
#define TROUPE_MUTEX_INLINE_ [[gnu::always_inline]] inline
#else
#define TROUPE_MUTEX_INLINE_ inline
#endif

namespace troupe::detail {

/// A handle the statement can sort and lock: `L*` for a lockable L, or
/// `lock_ref`. (Not `lock_ref*`: that would order the refs, not the locks.)
template <class E>
concept lock_handle = std::is_same_v<E, lock_ref> ||
    (std::is_pointer_v<E>&& lockable<std::remove_pointer_t<E>> &&
     !std::is_same_v<std::remove_cv_t<std::remove_pointer_t<E>>, lock_ref>);

inline std::uintptr_t address_key(const volatile void* p) noexcept {
    return reinterpret_cast<std::uintptr_t>(p);
}

struct lock_ref_access {
    static std::uintptr_t object(const lock_ref& r) noexcept { return address_key(r.object_); }
    static std::uintptr_t ops(const lock_ref& r) noexcept { return address_key(r.ops_); }
};

/// Strict order of handles: by address; for lock_ref, ties (an object and
/// its first member, named through different types) broken by type.
struct handle_before {
    template <class L>
    bool operator()(L* a, L* b) const noexcept {
        return address_key(a) < address_key(b);
    }
    bool operator()(const lock_ref& a, const lock_ref& b) const noexcept {
        using acc = lock_ref_access;
        return acc::object(a) < acc::object(b) ||
               (acc::object(a) == acc::object(b) && acc::ops(a) < acc::ops(b));
    }
};

/// Compare-exchange without branches: afterwards !(b before a).
struct handle_order {
    template <class L>
    TROUPE_MUTEX_INLINE_ void operator()(L*& a, L*& b) const noexcept {
        // The lower key is a min (a cmov: compilers turn `swap ? y : x`
        // into a branch, which mispredicts half the time on random orders);
        // the higher is what remains of x ^ y.
        const std::uintptr_t x = address_key(a);
        const std::uintptr_t y = address_key(b);
        const std::uintptr_t lo = y < x ? y : x;
        a = reinterpret_cast<L*>(lo);
        b = reinterpret_cast<L*>(x ^ y ^ lo);
    }
    void operator()(lock_ref& a, lock_ref& b) const noexcept {
        // Both words move together, selected by index rather than by branch.
        const lock_ref x = a;
        const lock_ref y = b;
        const lock_ref* const pick[2] = {&x, &y};
        const std::size_t swap = handle_before{}(y, x);
        a = *pick[swap];
        b = *pick[swap ^ 1];
    }
};

/// The pairs ordered, in order, by the sorting networks with the fewest
/// compare-exchanges for 2 to 8 inputs (1, 3, 5, 9, 12, 16, 19). The 8-input
/// one is Batcher's odd-even merge sort; the 7-input one is it without the
/// comparators that touch input 7 (an absent input acts as +infinity, which
/// those comparators never move).
struct cx_pair {
    unsigned char lo, hi;
};
template <std::size_t N>
consteval auto network_pairs() {
    if constexpr (N == 2) {
        return std::array<cx_pair, 1>{{{0, 1}}};
    } else if constexpr (N == 3) {
        return std::array<cx_pair, 3>{{{0, 2}, {0, 1}, {1, 2}}};
    } else if constexpr (N == 4) {
        return std::array<cx_pair, 5>{{{0, 1}, {2, 3}, {0, 2}, {1, 3}, {1, 2}}};
    } else if constexpr (N == 5) {
        return std::array<cx_pair, 9>{
            {{0, 1}, {3, 4}, {2, 4}, {2, 3}, {0, 3}, {0, 2}, {1, 4}, {1, 3}, {1, 2}}};
    } else if constexpr (N == 6) {
        return std::array<cx_pair, 12>{{{1, 2},
                                        {4, 5},
                                        {0, 2},
                                        {3, 5},
                                        {0, 1},
                                        {3, 4},
                                        {1, 4},
                                        {0, 3},
                                        {2, 5},
                                        {1, 3},
                                        {2, 4},
                                        {2, 3}}};
    } else if constexpr (N == 7) {
        return std::array<cx_pair, 16>{{{0, 1},
                                        {2, 3},
                                        {4, 5},
                                        {0, 2},
                                        {1, 3},
                                        {4, 6},
                                        {1, 2},
                                        {5, 6},
                                        {0, 4},
                                        {1, 5},
                                        {2, 6},
                                        {2, 4},
                                        {3, 5},
                                        {1, 2},
                                        {3, 4},
                                        {5, 6}}};
    } else {
        static_assert(N == 8, "networks exist for 2 to 8 inputs");
        return std::array<cx_pair, 19>{{{0, 1},
                                        {2, 3},
                                        {4, 5},
                                        {6, 7},
                                        {0, 2},
                                        {1, 3},
                                        {4, 6},
                                        {5, 7},
                                        {1, 2},
                                        {5, 6},
                                        {0, 4},
                                        {1, 5},
                                        {2, 6},
                                        {3, 7},
                                        {2, 4},
                                        {3, 5},
                                        {1, 2},
                                        {3, 4},
                                        {5, 6}}};
    }
}

template <std::size_t N, class E, class Cx, std::size_t... K>
TROUPE_MUTEX_INLINE_ void run_network(E* a, Cx& cx, std::index_sequence<K...>) noexcept {
    constexpr auto pairs = network_pairs<N>();
    (cx(a[pairs[K].lo], a[pairs[K].hi]), ...);
}

/// Sorts 2 to 8 handles with the network for that count, unrolled so the
/// compiler keeps them in registers. `cx(x, y)` orders one pair.
template <std::size_t N, class E, class Cx>
TROUPE_MUTEX_INLINE_ void sort_network(E* a, Cx cx) noexcept {
    run_network<N>(a, cx, std::make_index_sequence<network_pairs<N>().size()>{});
}

template <class E, class Cx, std::size_t... J>
TROUPE_MUTEX_INLINE_ void insertion_pass(E* a, Cx& cx, std::index_sequence<J...>) noexcept {
    // Pass i = sizeof...(J) orders (i-1, i), then (i-2, i-1), ..., (0, 1).
    constexpr std::size_t i = sizeof...(J);
    (cx(a[i - 1 - J], a[i - J]), ...);
}

template <class E, class Cx, std::size_t... I>
TROUPE_MUTEX_INLINE_ void insertion_passes(E* a, Cx& cx, std::index_sequence<I...>) noexcept {
    (insertion_pass(a, cx, std::make_index_sequence<I + 1>{}), ...);
}

/// Straight insertion sort as a network (Knuth 5.3.4): element i sinks
/// through the i sorted ones by unconditional compare-exchanges, so there is
/// no data-dependent branch to mispredict. n(n-1)/2 compare-exchanges, fully
/// unrolled, for a count known at compile time.
template <std::size_t N, class E, class Cx>
TROUPE_MUTEX_INLINE_ void insertion_network(E* a, Cx cx) noexcept {
    insertion_passes(a, cx, std::make_index_sequence<N - 1>{});
}

/// Straight insertion sort: for more than 8 locks (rare; cost grows as n²).
template <class E, class Before>
inline void insertion_sort(E* a, std::size_t n, Before before) noexcept {
    for (std::size_t i = 1; i < n; ++i) {
        const E v = a[i];
        std::size_t j = i;
        for (; j > 0 && before(v, a[j - 1]); --j) a[j] = a[j - 1];
        a[j] = v;
    }
}

/// Sorts `n` handles (a run-time count) into address order: nothing for 0
/// or 1, a network for 2 to 8, insertion sort beyond.
template <class E, class Cx = handle_order, class Before = handle_before>
inline void sort_handles(E* a, std::size_t n, Cx cx = {}, Before before = {}) noexcept {
    switch (n) {
    case 0:
    case 1: return;
    case 2: sort_network<2>(a, cx); return;
    case 3: sort_network<3>(a, cx); return;
    case 4: sort_network<4>(a, cx); return;
    case 5: sort_network<5>(a, cx); return;
    case 6: sort_network<6>(a, cx); return;
    case 7: sort_network<7>(a, cx); return;
    case 8: sort_network<8>(a, cx); return;
    default: insertion_sort(a, n, before); return;
    }
}

/// Sorts N handles, N known at compile time: a minimal network for 2 to 8
/// (19 compare-exchanges at 8, against 28 for insertion), insertion sort
/// beyond (as a network up to 16, where its n(n-1)/2 branch-free steps beat
/// the branches of the plain loop).
template <std::size_t N, class E, class Cx = handle_order, class Before = handle_before>
TROUPE_MUTEX_INLINE_ void sort_fixed(E* a, Cx cx = {}, Before before = {}) noexcept {
    if constexpr (N <= 1) {
        return;
    } else if constexpr (N <= 8) {
        sort_network<N>(a, cx);
    } else if constexpr (N <= 16) {
        insertion_network<N>(a, cx);
    } else {
        insertion_sort(a, N, before);
    }
}

template <class L>
inline L& target(L* p) noexcept {
    return *p;
}
inline const lock_ref& target(const lock_ref& r) noexcept { return r; }

/// Whether sorted handle `i` repeats its predecessor (acquired once only).
template <class E>
inline bool repeats(const E* a, std::size_t i) noexcept {
    return i != 0 && a[i] == a[i - 1];
}

/// Unlocks sorted handles [0, n) in reverse order, each distinct lock once.
template <class E>
inline void release_sorted(const E* a, std::size_t n) noexcept {
    while (n-- > 0) {
        if (!repeats(a, n)) detail::target(a[n]).unlock();
    }
}

/// Locks sorted handles in order, each distinct lock once. If a lock()
/// throws, the locks already taken are released (in reverse) and the
/// exception propagates.
template <class E>
inline void acquire_sorted(const E* a, std::size_t n) {
    if constexpr (noexcept(detail::target(a[0]).lock())) {
        for (std::size_t i = 0; i < n; ++i) {
            if (!repeats(a, i)) detail::target(a[i]).lock();
        }
    } else {
        std::size_t i = 0;
        try {
            for (; i < n; ++i) {
                if (!repeats(a, i)) detail::target(a[i]).lock();
            }
        } catch (...) {
            release_sorted(a, i);
            throw;
        }
    }
}

template <class E, std::size_t... I>
TROUPE_MUTEX_INLINE_ void release_unrolled(const E* a, std::index_sequence<I...>) noexcept {
    constexpr std::size_t last = sizeof...(I) - 1;
    ((repeats(a, last - I) ? void() : detail::target(a[last - I]).unlock()), ...);
}

/// release_sorted for a count known at compile time, unrolled.
template <std::size_t N, class E>
TROUPE_MUTEX_INLINE_ void release_fixed(const E* a) noexcept {
    release_unrolled(a, std::make_index_sequence<N>{});
}

template <class E, std::size_t... I>
TROUPE_MUTEX_INLINE_ void acquire_unrolled(const E* a, std::size_t& taken,
                                           std::index_sequence<I...>) {
    ((repeats(a, I) ? void() : detail::target(a[I]).lock(), taken = I + 1), ...);
}

/// acquire_sorted for a count known at compile time, unrolled.
template <std::size_t N, class E>
TROUPE_MUTEX_INLINE_ void acquire_fixed(const E* a) {
    std::size_t taken = 0;  // handles [0, taken) are locked
    if constexpr (N == 1 || noexcept(detail::target(a[0]).lock())) {  // nothing to undo
        acquire_unrolled(a, taken, std::make_index_sequence<N>{});
    } else {
        try {
            acquire_unrolled(a, taken, std::make_index_sequence<N>{});
        } catch (...) {
            release_sorted(a, taken);
            throw;
        }
    }
}

}  // namespace troupe::detail

#undef TROUPE_MUTEX_INLINE_
