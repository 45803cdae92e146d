#pragma once
/// Explicit configuration of an actor system's executor.
///
///     troupe::executor_config cfg;
///     cfg.workers = 4;                             // kernel threads
///     cfg.queues_per_worker = 32;                  // mailboxes = 4 x 32
///     cfg.victims = troupe::victim_policy::random;
///     cfg.pin = true;                              // bind worker i to PU i
///     troupe::actor_system sys{cfg};
///
/// Every field has a working default; `executor_config{}` equals the
/// default-constructed actor_system.
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "troupe/actor_defaults.hpp"
#include "troupe/behaviour_exception.hpp"
#include "troupe/victim_selector.hpp"

namespace troupe {

struct stop_report;

struct executor_config {
    /// Worker kernel threads; 0 means one per hardware thread this process
    /// may run on.
    std::size_t workers = 0;
    /// Mailboxes per worker.
    std::size_t queues_per_worker = actor_defaults::queues_per_worker;
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
    /// Bind worker i to hardware thread `worker_pu[i]` (default: i modulo
    /// the machine's hardware threads) through hwloc.
    bool pin = false;
    /// The hardware thread of each worker, for pinning and for locality
    /// grouping; empty means worker i on PU i (mod the PU count).
    std::vector<std::size_t> worker_pu;
    /// An hwloc synthetic description ("pack:2 numa:2 core:4 pu:2") used for
    /// locality grouping instead of this machine (tests; implies no pinning).
    std::string synthetic_topology;
    /// A name used in reports and statistics.
    std::string name;
    /// Called when an exception escapes a behaviour and no requester takes
    /// it (troupe/behaviour_exception.hpp); empty: the default handler
    /// (report on stderr, the actor terminates as if it returned Finished).
    behaviour_exception_handler on_behaviour_exception;
    /// `stop()` reports the actors still alive after waiting this long, and
    /// again after each further period while it waits; zero: never.
    std::chrono::milliseconds stop_report_period = actor_defaults::stop_report_period;
    /// Receives those reports (on the thread calling stop(), between its
    /// waits; it may send messages, e.g. poison pills); empty: one line on
    /// stderr per report ("troupe: actor system 'x': stop still waiting
    /// after 10 s: 2 actor(s) still alive: 2 x server").
    std::function<void(const stop_report&)> on_stop_report;
};

}  // namespace troupe
