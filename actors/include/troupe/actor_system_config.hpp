#pragma once
/// Explicit configuration of an actor system's executor.
///
///     troupe::actor_system_config cfg;
///     cfg.workers = 4;                             // kernel threads
///     cfg.queues_per_worker = 32;                  // mailboxes = 4 x 32
///     cfg.victims = troupe::victim_policy::random;
///     cfg.pin = true;                              // bind worker i to PU i
///     cfg.placement = troupe::external_placement::grouped;  // default: spread
///     troupe::actor_system sys{cfg};
///
/// Every field has a working default; `actor_system_config{}` equals the
/// default-constructed actor_system.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "troupe/behaviour_exception.hpp"
#include "troupe/defaults/actors.hpp"
#include "troupe/victim_selector.hpp"

namespace troupe {

struct stop_report;

/// Which mailbox an actor created outside the executor gets (created by a
/// thread that is not one of the system's workers: `main`, another OS
/// thread, a user thread). An actor created by a behaviour always takes a
/// mailbox of the creating worker's own range.
enum class external_placement : std::uint8_t {
    /// Each creation takes the next mailbox over all workers' mailboxes (the
    /// Cforall executor's rule; the default): neighbouring creations land on
    /// different workers. Suits a few long-running independent actors
    /// created by one thread (each starts on its own worker without waiting
    /// for a steal); communicating neighbours then talk across cores.
    spread,
    /// Runs of `actor_system_config::placement_run` consecutive creations go to
    /// one worker, round-robin over that worker's mailboxes; the next run
    /// goes to the next worker. Actors created together (which usually talk
    /// to each other) share a worker, so their messages do not cross cores;
    /// more actors than one run still spread over every worker, and idle
    /// workers steal mailboxes to even out the rest.
    grouped,
};

/// "grouped" or "spread" (a static string). Never blocks or throws.
const char* to_string(external_placement p) noexcept;

/// What runs a worker's loop (experimental; docs/scheduler.md, "Actor
/// workers as user threads").
enum class worker_threads : std::uint8_t {
    /// `kernel`, unless the environment variable TROUPE_ACTOR_WORKERS is
    /// `user_threads` (read once per process): then `user`. The default.
    from_environment,
    /// Each worker is a kernel thread (std::thread); a behaviour that blocks
    /// holds it (the established mode).
    kernel,
    /// Each worker is a troupe user thread on a cluster of its own
    /// (`actor_system_config::processors` kernel threads): an idle worker parks
    /// with troupe's park/unpark, and a behaviour that blocks on a troupe
    /// primitive parks its worker, so the processor runs another worker.
    user,
};

/// "from_environment", "kernel" or "user" (a static string). Nothrow.
const char* to_string(worker_threads w) noexcept;

struct actor_system_config {
    /// Worker kernel threads; 0 means one per hardware thread this process
    /// may run on.
    std::size_t workers = 0;
    /// Mailboxes per worker.
    std::size_t queues_per_worker = defaults::actors::queues_per_worker;
    /// Total mailboxes; 0 means workers x queues_per_worker. An explicit
    /// count is split into contiguous ranges (the first `mailboxes % workers`
    /// workers get one extra). Fewer mailboxes than workers is an error
    /// (reported in checked builds; the count is raised to `workers`).
    std::size_t mailboxes = 0;
    /// Whether idle workers steal mailboxes (off automatically with one
    /// worker or one mailbox per worker).
    bool stealing = true;
    /// How a thief picks its victim.
    victim_policy victims = victim_policy::longest;
    /// Overrides `victims` when set.
    victim_factory custom_victims;
    /// Where actors created outside the executor get their mailbox.
    external_placement placement = external_placement::spread;
    /// Creations per worker run under `external_placement::grouped` (0 is
    /// taken as 1). With W workers, the first W x placement_run external
    /// creations visit every worker once.
    std::size_t placement_run = defaults::actors::placement_run;
    /// Bind worker i to hardware thread `worker_pu[i]` (default: i modulo
    /// the machine's hardware threads) through hwloc.
    bool pin = false;
    /// The hardware thread of each worker, for pinning and for locality
    /// grouping; empty means worker i on PU i (mod the PU count).
    std::vector<std::size_t> worker_pu;
    /// An hwloc synthetic description ("pack:2 numa:2 core:4 pu:2") used for
    /// locality grouping instead of this machine (tests; implies no pinning).
    std::string synthetic_topology;
    /// Experimental: kernel-thread or user-thread workers (see
    /// worker_threads). The default reads TROUPE_ACTOR_WORKERS once.
    worker_threads threads = worker_threads::from_environment;
    /// User-thread workers only: the kernel threads (processors) of the
    /// executor's cluster; 0 means ceil(workers / k), where k is 1, or the
    /// K of TROUPE_ACTOR_WORKERS=user_threads:K. More workers than
    /// processors let a processor run another worker while one is blocked
    /// in a behaviour. With `workers` = 0 as well: available_concurrency()
    /// processors and k workers per processor.
    std::size_t processors = 0;
    /// A name used in reports and statistics.
    std::string name;
    /// Called when an exception escapes a behaviour and no requester takes
    /// it (troupe/behaviour_exception.hpp); empty: the default handler
    /// (report on stderr, the actor terminates as if it returned Finished).
    behaviour_exception_handler on_behaviour_exception;
    /// `stop()` reports the actors still alive after waiting this long, and
    /// again after each further period while it waits; zero: never.
    std::chrono::milliseconds stop_report_period = defaults::actors::stop_report_period;
    /// Receives those reports (on the thread calling stop(), between its
    /// waits; it may send messages, e.g. poison pills); empty: one line on
    /// stderr per report ("troupe: actor system 'x': stop still waiting
    /// after 10 s: 2 actor(s) still alive: 2 x server").
    std::function<void(const stop_report&)> on_stop_report;
};

}  // namespace troupe
