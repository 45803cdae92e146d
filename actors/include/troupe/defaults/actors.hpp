#pragma once
/// Every tunable default of the troupe actors module, in one place:
/// `troupe::defaults::actors` (troupe's tunables convention is described in
/// troupe/defaults/core.hpp). Run-time settings live in `actor_system_config`, whose
/// fields start from these.
///
///     troupe::actor_system_config cfg;
///     cfg.queues_per_worker = troupe::defaults::actors::queues_per_worker * 2;
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace troupe::defaults::actors {

/// Mailboxes per worker (the thesis's sharding factor). More mailboxes mean
/// less send contention and finer-grained stealing, at the cost of a longer
/// scan per pass.
inline constexpr std::size_t queues_per_worker = 16;

/// Actors created outside the executor that land on one worker before the
/// next creation moves to the next worker (external_placement::grouped,
/// which is opt-in).
/// Long enough that groups of communicating actors created together rarely
/// straddle two workers (a group of g actors straddles a run boundary with
/// probability about g / placement_run); short enough that a few hundred
/// independent actors still start on every worker of a small machine.
inline constexpr std::size_t placement_run = 256;

/// Envelopes a fresh copy queue holds before its first doubling.
inline constexpr std::uint32_t copy_queue_capacity = 16;

/// A copy queue is never shrunk below this many envelopes.
inline constexpr std::uint32_t copy_queue_min_capacity = 16;

/// Gulps over which a copy queue's peak use is measured before it may be
/// halved (it is halved only when that peak used less than half of it).
inline constexpr std::uint32_t copy_queue_reclaim_window = 64;

/// A drained copy queue keeps at most this many envelopes of capacity
/// (24 bytes each: 384 KiB). A queue grown beyond it is cut back to
/// `copy_queue_min_capacity` as soon as its batch is done (its array goes
/// to the worker's burst cache, below), instead of waiting for the window
/// above: a burst usually goes through several queues in turn (a
/// sender's stage, the receiver's mailbox, the gulping worker), and each
/// that kept it pinned a copy (Savina radixsort: 16 pipeline stages, 33
/// queues of 3 MiB, 92 MiB resident). Large enough that steady loads seen
/// so far never reallocate: the executor benchmark's queues reach 8,192
/// envelopes now and then, and with 4,096 here each such batch cut them
/// back and regrew them (7% more CPU time at 1 worker, memmove and page
/// faults in the profile).
inline constexpr std::uint32_t copy_queue_retain_max = 16384;

/// Bytes of burst-sized arrays (larger than `copy_queue_retain_max`) each
/// worker keeps for its next bursts once the queues that held them are cut
/// back. A load whose bursts repeat (the repeat benchmark: 200,000 replies
/// a round) reuses them instead of returning them to the system and
/// faulting fresh pages in every round (1.8x slower without the cache); a
/// one-off burst holds at most this much per worker.
inline constexpr std::size_t burst_cache_bytes = std::size_t{16} << 20;

/// Empty passes over its own mailboxes a worker makes before it tries to
/// steal (the thesis: two). After each attempt that finds nothing the gap
/// doubles, up to `steal_backoff_max_passes`.
inline constexpr unsigned steal_every_passes = 2;
inline constexpr unsigned steal_backoff_max_passes = 128;

/// A gulp at least this large, while a worker is parked and none is looking
/// for work, wakes one parked worker to help.
inline constexpr std::uint32_t helper_wake_batch = 64;

/// Sends a batch's behaviours may append to that same batch (e.g. an actor
/// messaging itself) before further ones wait for the next gulp, so one busy
/// mailbox cannot starve the worker's others.
inline constexpr std::uint32_t batch_append_budget = 1024;

/// Deliveries a batch may make from its depth-first stack (messages that
/// its behaviours sent to actors they created in it) before it hands the
/// rest of the stack to the mailboxes, so that one tree or chain of new
/// actors cannot keep the worker from its other mailboxes for long.
inline constexpr std::uint32_t depth_first_budget = 16384;

/// How many envelopes ahead of the one being delivered a worker prefetches
/// the receiving actor.
inline constexpr std::uint32_t prefetch_distance = 16;

/// A thief may take a worker's only waiting mailbox when that worker's
/// current batch has run this long (timestamp ticks: TSC cycles on x86,
/// about 20-50 us on current machines).
inline constexpr std::uint64_t long_batch_ticks = 100000;

/// A batch that has run `long_batch_ticks` hands its staged sends to their
/// mailboxes without waiting for its end (while another worker is outside a
/// batch), checking the clock once every this many staged sends (rounded
/// to whole wraps of the 8-entry send pipeline): the work it hands out (the
/// next stage of a pipeline) can then run on another worker meanwhile,
/// instead of only after the whole batch. A batch that sends nothing never
/// looks at the clock.
inline constexpr std::uint32_t long_batch_flush_check = 32;

/// While another worker is inside a batch (its behaviour may be blocked
/// with work queued behind it), a parked worker wakes up this often to look
/// for work to steal. An idle system parks without a timeout.
inline constexpr std::chrono::microseconds busy_park_period{2000};

/// Napping (docs/actors.md, "Napping"): every this many deliveries a
/// worker looks at what its batches sent. If at least a third went to
/// other workers' mailboxes, its batches averaged fewer than
/// `nap_max_batch_average` messages and its deliveries took under
/// `nap_max_ticks_per_message` time-stamp counter ticks each (idle time
/// included; judged at a first look only, not at the short look after a
/// nap), and another worker is awake, it naps
/// (announced idle, not woken by senders, its mailboxes run by the awake
/// workers) for `nap_first`, then looks again after `nap_window_after`
/// deliveries and naps twice as long while the pattern lasts, up to
/// `nap_first << nap_doublings`.
inline constexpr std::uint32_t nap_window = 4096;
inline constexpr std::uint32_t nap_window_after = 128;
inline constexpr std::uint32_t nap_max_batch_average = 8;
/// The time bound is 8x under ThreadSanitizer, whose instrumentation makes
/// a short delivery take 7,000-10,000 ticks (a napping pattern in the
/// tests): the bound is meant to tell compute from short messages, and the
/// sanitizer build must still see the napping code run.
#if defined(__SANITIZE_THREAD__)
inline constexpr std::uint64_t nap_max_ticks_per_message = 3000 * 8;
#else
inline constexpr std::uint64_t nap_max_ticks_per_message = 3000;
#endif
inline constexpr std::chrono::microseconds nap_first{250};
inline constexpr unsigned nap_doublings = 5;

/// Value sends' blocks (troupe::send<M>): a worker keeps up to this many
/// bytes of freed blocks, all sizes together, for its behaviours' next
/// value sends; beyond it, blocks go to the system's depot (two or more
/// workers: value_block_chain) or back to ::operator delete. A chain of
/// value sends needs a few blocks; a burst needs its own size (Savina's
/// radixsort: 50,000 messages of 32 bytes at a stage's end, 1.6 MiB). The
/// bound is also what a worker may hold that other workers cannot use
/// (blocks freed where they are not sent again): at 1 MiB, Savina's sieve
/// at 2 workers peaked 1 MiB higher, over CAF's; docs/actors.md, "Value
/// sends".
inline constexpr std::size_t value_blocks_kept_max = 256 * 1024;

/// Value-send blocks a worker frees beyond value_blocks_kept_max go to its
/// system's depot in chains of this many blocks of one size, where a worker
/// whose own list is empty takes a chain (one lock for the lot) before it
/// calls ::operator new. Across workers a pipeline allocates on one and
/// frees on the other (Savina's radixsort at 2 workers: 53% of its samples
/// in glibc's malloc and free), and glibc cannot give one thread's frees to
/// another's mallocs cheaply.
inline constexpr std::uint32_t value_block_chain = 32;
/// The depot's bound, bytes in all its chains together, per actor system.
/// A chain that would pass it goes back to ::operator delete.
inline constexpr std::size_t value_block_depot_max = 512 * 1024;

/// Empty passes (with a pause between them) an idle worker makes before it
/// parks on a futex. Bounds idle CPU use; a wake costs a futex round trip.
inline constexpr unsigned idle_passes_before_park = 2048;

/// How long `actor_system::stop()` waits before it reports the actors still
/// alive (and how often it repeats the report while it keeps waiting); see
/// actor_system_config::stop_report_period.
inline constexpr std::chrono::milliseconds stop_report_period{10000};

/// Minimum time between two wake-ups of a parked worker to help a busy one
/// (only when nobody is already looking for work), in microseconds.
inline constexpr unsigned helper_wake_interval_us = 200;

/// User-thread workers (actor_system_config::threads = user): empty passes an
/// idle worker makes, yielding its processor to other workers between
/// passes, before it parks (troupe park: its processor runs other threads
/// or goes idle itself).
inline constexpr unsigned user_idle_passes_before_park = 64;

/// User-thread workers: usable stack bytes of each worker (behaviours run
/// on it; mapped lazily, so unused pages cost nothing).
inline constexpr std::size_t user_worker_stack = std::size_t{1} << 20;

}  // namespace troupe::defaults::actors
