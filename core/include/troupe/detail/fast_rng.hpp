#pragma once
// Internal: the one pseudo-random generator of troupe's schedulers, for
// choices that only need to be spread out: a thief's first victim (core
// processors), the victim and the scan start of an actor worker's steal,
// the victim selectors' draws. Not for anything that needs statistical
// quality or unpredictability.
//
//     troupe::detail::fast_rng rng{troupe::detail::fast_rng::seed_for(index)};
//     std::size_t start = rng.below(n);
//
// xorshift64* (Vigna): three shifts and a multiply, 64 bits of state.
// Not synchronised: one generator per thread (a processor, a worker, a
// worker's victim selector).
#include <cstddef>
#include <cstdint>

namespace troupe::detail {

class fast_rng {
public:
    /// A seed for generator `index` of one family of threads: distinct
    /// indices give distinct, well-spread seeds (a Weyl sequence); `stream`
    /// separates families that share indices (a worker and its selector).
    static constexpr std::uint64_t seed_for(std::uint64_t index,
                                            std::uint64_t stream = 0) noexcept {
        return (0x9e3779b97f4a7c15ULL * (index + 1)) ^ stream;
    }

    /// Starts from `seed` (0, the one state xorshift never leaves, is
    /// replaced by a fixed non-zero seed).
    explicit constexpr fast_rng(std::uint64_t seed) noexcept : state_(seed ? seed : seed_for(0)) {}

    /// The next 64 pseudo-random bits. nothrow.
    constexpr std::uint64_t next() noexcept {
        state_ ^= state_ >> 12;
        state_ ^= state_ << 25;
        state_ ^= state_ >> 27;
        return state_ * 0x2545f4914f6cdd1dULL;
    }
    /// A pseudo-random number in [0, n); `n` must be positive. nothrow.
    constexpr std::size_t below(std::size_t n) noexcept {
        return static_cast<std::size_t>(next() % n);
    }

private:
    std::uint64_t state_;  // never 0
};

}  // namespace troupe::detail
