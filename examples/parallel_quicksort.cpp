// A parallel quicksort with troupe::fork_join: partition, then sort the two
// sides in parallel; small ranges are sorted serially (forking a task per
// few elements costs more than it gains). No thread is made per call: each
// fork is a task on the worker's deque that an idle processor may steal.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <troupe/core.hpp>

namespace {
void quicksort(std::int64_t* first, std::int64_t* last) {
    if (last - first > 2048) {
        // Median of three as the pivot, then a three-way split.
        const std::int64_t a = first[0], b = first[(last - first) / 2], c = last[-1];
        const std::int64_t pivot = std::max(std::min(a, b), std::min(std::max(a, b), c));
        std::int64_t* lt =
            std::partition(first, last, [pivot](std::int64_t x) { return x < pivot; });
        std::int64_t* gt = std::partition(lt, last, [pivot](std::int64_t x) { return x == pivot; });
        troupe::fork_join([&] { quicksort(first, lt); }, [&] { quicksort(gt, last); });
        return;
    }
    std::sort(first, last);
}
}  // namespace

int main() {
    troupe::processors p{2};
    std::vector<std::int64_t> v(2'000'000);
    std::mt19937_64 rng{42};
    for (auto& x : v) x = static_cast<std::int64_t>(rng() % 1'000'000);

    // Run from a user thread this time: its processor is one of the two.
    troupe::thread sorter{[&] { quicksort(v.data(), v.data() + v.size()); }};
    sorter.join();

    troupe::sout.println("sorted ", v.size(),
                         " numbers: ", std::is_sorted(v.begin(), v.end()) ? "yes" : "NO",
                         "; smallest ", v.front(), ", largest ", v.back());
}
