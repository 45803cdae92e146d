// A parallel sum with troupe::parallel_for_blocks: each block sums its part
// into a local, then adds it once to the total (no sharing per element).
// Called from main, an OS thread: it lends itself to the cluster while it
// waits, so it computes beside the processors' helpers.
#include <atomic>
#include <cstdint>
#include <numeric>
#include <vector>

#include <troupe/core.hpp>

int main() {
    troupe::processors p{2};
    std::vector<std::uint32_t> v(10'000'000);
    std::iota(v.begin(), v.end(), 1u);

    std::atomic<std::uint64_t> total{0};
    troupe::parallel_for_blocks(std::size_t{0}, v.size(), [&](std::size_t b, std::size_t e) {
        std::uint64_t local = 0;
        for (std::size_t i = b; i < e; ++i) local += v[i];
        total.fetch_add(local, std::memory_order_relaxed);
    });

    const std::uint64_t n = v.size();
    troupe::sout.println("sum of 1..", n, " = ", total.load(), " (expected ", n * (n + 1) / 2, ")");

    // The element form: every element doubled in place.
    troupe::parallel_for(v, [](std::uint32_t& x) { x *= 2; });
    troupe::sout.println("after doubling, v[9] = ", v[9]);
}
