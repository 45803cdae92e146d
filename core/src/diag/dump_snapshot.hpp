#pragma once
// Internal: a snapshot of the registry's threads, shared by the dump and
// the watch thread's everyone-asleep check.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "diag/registry.hpp"

namespace troupe::detail {

struct thread_view {
    const context* c = nullptr;
    std::uint64_t id = 0;
    const char* name = nullptr;
    bool user = false;
    long tid = 0;
    const cluster_impl* home = nullptr;
    bool finished = false;
    bool parked = false;  // its permit word says parked
    bool moved = false;   // its wait ended while we read it
    const processor* running_on = nullptr;
    std::uint32_t seq = 0;       // its wait record's sequence (odd: waiting)
    const char* kind = nullptr;  // what it waits on, or nullptr
    const char* res_name = nullptr;
    const void* resource = nullptr;
    std::int64_t since_ns = 0, until_ns = 0;
    const context* holder = nullptr;  // the wait-for edge
    const char* relation = "held by";
    const wait_describer* describer = nullptr;  // what read `holder` (confirm_cycle)
    bool handed = false;                        // the resource names it already: its wait is ending
    std::string details;
};

// Under the registry's lock.
std::vector<thread_view> snapshot_threads(registry& r);
// The cycles of the snapshot's wait-for graph that are still there when
// re-read (confirm_cycle: one snapshot reads each thread at a different
// moment, so a cycle in it alone may never have existed). Under the
// registry's lock that `views` was taken under.
std::vector<std::string> find_cycles(const std::vector<thread_view>& views);
void write_dump(registry& r, std::ostream& os);
std::string format_wait(const thread_view& v);

}  // namespace troupe::detail
