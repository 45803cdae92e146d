#pragma once
/// Counters of an actor system, aggregated over its workers.
///
///     troupe::actor_system sys{2};
///     ...
///     sys.stop();
///     auto s = sys.statistics();          // all zero unless -Dstatistics=true
///     std::cout << s;                     // the report printed at stop
///
/// Counted per worker without atomics (statistics builds only) and summed
/// when read; in other builds every field is zero and nothing is counted.
#include <cstdint>
#include <iosfwd>

#include "troupe/config.hpp"

namespace troupe {

struct actor_statistics {
    /// Whether this build counts (`-Dstatistics=true`); if not, every field
    /// is zero and `os << s` prints "statistics not built in".
    static constexpr bool built_in = detail::statistics_build;

    std::uint64_t actors_created = 0;  ///< by behaviours and by other threads
    std::uint64_t messages_sent = 0;   ///< including poison pills
    /// Messages sent by behaviours to a mailbox another worker owned when the
    /// sender's batch handed them over (they cross cores).
    std::uint64_t cross_worker_sends = 0;
    std::uint64_t messages_received = 0;  ///< receives run
    std::uint64_t gulps = 0;              ///< non-empty mailboxes taken in one lock acquisition
    std::uint64_t gulped_messages = 0;    ///< envelopes taken by those gulps
    std::uint64_t missed_gulps = 0;  ///< gulps skipped: the mailbox was being processed elsewhere
    std::uint64_t steal_attempts = 0;
    std::uint64_t steal_no_candidate = 0;  ///< attempts that found no eligible mailbox
    std::uint64_t steal_failed_swaps = 0;  ///< attempts whose two-CAS swap lost a race
    std::uint64_t steals = 0;              ///< mailboxes stolen
    std::uint64_t messages_stolen = 0;     ///< envelopes queued in stolen mailboxes when stolen
    std::uint64_t parks = 0;               ///< times an idle worker parked
    /// Gulps of a mailbox in the range of a parked worker (asleep, or woken
    /// and not yet running), taken by an awake worker instead.
    std::uint64_t adopted_gulps = 0;
    /// Sends at the end of a batch to a parked worker's mailbox whose wake
    /// the sending worker skipped because it was about to run dry: it took
    /// the work itself (a hand-off chain staying on one core).
    std::uint64_t wakes_taken_over = 0;
    /// Flushes of a batch's staged sends before its end, because the batch
    /// had run long (a pipeline's next stage may then run elsewhere).
    std::uint64_t long_batch_flushes = 0;
    /// Naps: a worker whose short batches sent mostly to other workers'
    /// mailboxes left its mailboxes to the awake workers for a while
    /// (docs/actors.md, "Napping").
    std::uint64_t naps = 0;

    double average_gulp() const noexcept {
        return gulps ? static_cast<double>(gulped_messages) / static_cast<double>(gulps) : 0.0;
    }
    double average_steal() const noexcept {
        return steals ? static_cast<double>(messages_stolen) / static_cast<double>(steals) : 0.0;
    }
};

/// Writes the multi-line report printed at stop in statistics builds; in
/// other builds the line "statistics not built in (...)".
std::ostream& operator<<(std::ostream& os, const actor_statistics& s);

}  // namespace troupe
