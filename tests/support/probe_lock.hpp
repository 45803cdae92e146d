#pragma once
// A lock that records what happens to it, for tests of lock ordering and of
// the mutex statement: +id in a shared journal on lock, -id on unlock (ids
// start at 1); it can be told to throw from lock(). Not thread-safe: it
// observes orders, it does not exclude.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

namespace troupe_test {

struct probe_lock {
    int id = 0;
    std::vector<int>* journal = nullptr;
    bool held = false;
    bool throw_on_lock = false;
    void lock() {
        if (throw_on_lock) throw std::runtime_error("probe lock failed");
        REQUIRE_FALSE(held);  // acquired twice: duplicates were not skipped
        held = true;
        journal->push_back(id);
    }
    void unlock() noexcept {
        held = false;
        journal->push_back(-id);
    }
};

/// N probes sharing one journal, ids 1..N. p[i] lies below p[i + 1] in
/// memory, so index order is address order.
template <std::size_t N>
struct probe_set {
    std::vector<int> journal;
    std::array<probe_lock, N> p;
    probe_set() {
        for (std::size_t i = 0; i < N; ++i) p[i] = probe_lock{static_cast<int>(i) + 1, &journal};
    }
    bool none_held() const {
        return std::none_of(p.begin(), p.end(), [](const probe_lock& q) { return q.held; });
    }
    /// The journal so far, emptied.
    std::vector<int> take() { return std::exchange(journal, {}); }
};

}  // namespace troupe_test
