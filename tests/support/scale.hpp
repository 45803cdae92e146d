#pragma once
// The one sizing convention of bounded stress tests: write the count a
// release build runs and wrap it in scaled(); a sanitizer build (ASan+UBSan
// or TSan, where every step costs 5-20x more) runs count / divisor of it,
// never fewer than 1. No troupe dependency: the standalone mutexstmt test
// uses it too.
namespace troupe_test {

/// Whether this translation unit is built under ASan or TSan.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif

/// `n` in a release build, n / divisor (at least 1) under a sanitizer.
template <class N>
constexpr N scaled(N n, long divisor = 10) noexcept {
    if (!sanitized) return n;
    const N s = static_cast<N>(n / divisor);
    return s > 0 ? s : N{1};
}

}  // namespace troupe_test
