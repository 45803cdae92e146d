#pragma once
// Internal: counters of the watch thread (the everyone-asleep check), for
// the tests. Not part of the API.
#include <cstdint>

namespace troupe::detail {

struct watch_stats {
    std::uint64_t looks;  // looks at the whole process taken so far
    std::uint64_t walks;  // of them, the ones that counted /proc/self/task
};

// A snapshot (relaxed loads). Nothrow.
watch_stats watch_counters() noexcept;

}  // namespace troupe::detail
