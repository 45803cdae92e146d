#pragma once
// Internal: wake sources, for the everyone-asleep check (troupe/dump.hpp).
//
// A module above core that runs kernel threads of its own which wake
// troupe threads from outside (troupe-io's poller and blocking-call
// helpers) registers a wake source, so that the check can tell its threads
// from a stranger's: they are accounted as troupe's own, and while the
// source says a wait on the outside world is pending (a thread parked on a
// socket), nobody is reported asleep. Without a registration those threads
// would count as unknown, and the check would never report anything.
#include <cstddef>

namespace troupe::detail {

/// Both functions run on the watch thread, concurrently with the program;
/// neither may block (a short lock is fine), throw or allocate.
struct wake_source {
    /// How many kernel threads the source runs now.
    std::size_t (*threads)() noexcept = nullptr;
    /// Whether a wait it will end from outside is pending now (a false
    /// "yes" costs a missed report; a false "no" a false one).
    bool (*pending)() noexcept = nullptr;
};

/// At most this many sources are registered.
inline constexpr std::size_t max_wake_sources = 4;

/// Registers `s` (static storage: it is never removed). Returns false if
/// max_wake_sources are registered already. Nothrow.
bool add_wake_source(const wake_source* s) noexcept;

}  // namespace troupe::detail
