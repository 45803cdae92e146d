#pragma once
/// An actor system: the executor (worker kernel threads and mailboxes) that
/// runs actors' behaviours.
///
///     {
///         troupe::actor_system sys;          // one worker per hardware thread
///         auto* a = new my_actor;            // joins sys (the default system)
///         *a | hello | troupe::delete_msg;
///         sys.stop();                        // blocks until every actor finished
///     }
///
///     troupe::start_actor_system(2);         // the thesis-style functions
///     ...
///     troupe::stop_actor_system();
///
/// Workers are OS kernel threads, each with its own range of mailboxes
/// (experimental: troupe user threads on a cluster of the system's own,
/// actor_system_config::threads; then a behaviour that blocks on a troupe
/// primitive parks its worker and the processor runs another one).
/// Idle workers spin briefly, try to steal mailboxes, then park on a futex:
/// an idle system uses no CPU. Several systems may exist at once and be
/// started and stopped repeatedly; the first running one (or the one from
/// `start_actor_system`) is the default that new actors join.
///
/// A behaviour may fulfil a troupe::future, take locks or do non-blocking
/// channel operations. A behaviour that blocks holds its worker's kernel
/// thread (that is the cost): the other workers keep running and steal that
/// worker's other mailboxes, but the rest of its current batch waits, and
/// with a single worker nothing else runs. A behaviour's sends are delivered
/// when its batch ends, or as soon as it blocks on a troupe primitive
/// (future, lock, semaphore, channel, waituntil, ask): the worker then also
/// wakes a parked worker to take over its other mailboxes. Blocking on
/// anything else (a std::mutex, I/O) does neither; call
/// troupe::flush_sends() first. Blocking on an actor of the same mailbox,
/// or with one worker on any actor, deadlocks: prefer replying with
/// messages.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "troupe/actor_statistics.hpp"
#include "troupe/actor_system_config.hpp"

namespace troupe {

namespace detail {
class executor;
}

/// Actors of one type still alive when a timed stop gave up.
struct survivor {
    std::string type;  ///< the actor's dynamic type
    std::size_t count = 0;
};

/// The outcome of `actor_system::stop_for`, and the periodic report of a
/// stop that keeps waiting (actor_system_config::stop_report_period).
struct stop_report {
    /// Every actor finished within the limit (the system stopped cleanly).
    bool finished = true;
    /// Actors still alive when the limit passed.
    std::size_t live_actors = 0;
    /// Those of them that had been sent at least one message, by type.
    std::vector<survivor> survivors;
    /// Live actors never sent a message (their type is unknown). Counted
    /// only when every mailbox was inspected (busy_mailboxes == 0), so the
    /// number is never a guess; otherwise they are in `not_inspected`.
    std::size_t never_messaged = 0;
    /// Live actors not named because some mailboxes were being processed
    /// (periodic reports of a running system): in those mailboxes, or never
    /// sent a message; which of the two is not known.
    std::size_t not_inspected = 0;
    /// Periodic reports: mailboxes that were being processed (a behaviour
    /// running or blocked in them; not inspected).
    std::size_t busy_mailboxes = 0;
    /// Messages queued in the inspected mailboxes.
    std::size_t queued_messages = 0;
    /// Periodic reports: how long stop() had waited.
    std::chrono::nanoseconds waited{0};
    /// Periodic reports: what each worker was doing, one line each, as
    /// troupe::dump prints them ("worker 0: in actor 'pinger' (ping_actor),
    /// receiving 'start' ...; blocked for 10.0 s on future (0x...), the reply
    /// to its ask 'ping' to actor 'ponger' (pong_actor)").
    std::vector<std::string> workers;
    /// Periodic reports: the request cycles among blocked behaviours
    /// ("request cycle: actor 'pinger' (ping_actor) (worker 0, in its receive
    /// of 'start') waits for the reply to its ask 'ping' to actor 'ponger'
    /// (pong_actor), which (worker 1, ...) waits for the reply to its ask
    /// 'pong' to actor 'pinger' (ping_actor)"), each re-checked before it
    /// is listed.
    std::vector<std::string> cycles;
    /// Periodic reports: the system's workers, and how many of them were
    /// blocked inside a behaviour on a troupe primitive.
    std::size_t worker_count = 0;
    std::size_t blocked_workers = 0;
    /// Periodic reports: when every worker was blocked inside a behaviour
    /// (re-checked), that, with what each one waits on; else empty.
    std::string all_workers_blocked;
    /// `stop_for` that gave up: workers it found blocked inside a behaviour
    /// on a troupe primitive and left there (not joined: such a behaviour
    /// may never return); `workers`, `cycles` and `all_workers_blocked`
    /// then say what they were doing.
    std::size_t workers_left = 0;
    /// A one-paragraph description ("3 actors still alive: 2 x server, ...").
    std::string to_string() const;
};

class actor_system {
public:
    /// One worker per hardware thread this process may run on.
    actor_system();
    /// `workers` workers, 16 mailboxes each, stealing with the longest-victim
    /// heuristic.
    explicit actor_system(std::size_t workers);
    /// An explicit configuration (see actor_system_config).
    explicit actor_system(const actor_system_config& config);
    actor_system(const actor_system&) = delete;
    actor_system& operator=(const actor_system&) = delete;

    /// Stops the system first if `stop` was not called (blocking until every
    /// actor has finished).
    ~actor_system();

    /// Blocks (parks the caller: a user thread or an OS thread) until every
    /// actor of this system has finished, then stops the workers. Returns at
    /// once if no actor is alive (or none was ever created). Actors may still
    /// be created (by behaviours or other threads) until the live count
    /// reaches zero. Calling it again is harmless; calling it from one of this
    /// system's behaviours is an error (it would wait for itself).
    ///
    /// Never hangs silently: after `config().stop_report_period` (default
    /// 10 s) and again after each further period it reports the actors still
    /// alive, by type and count, with what it saw (behaviours running or
    /// blocked, messages queued, or nothing at all: then the survivors wait
    /// for a poison pill) (to `actor_system_config::on_stop_report`, else one
    /// line on stderr), and keeps waiting. Nothrow in practice: a throwing hook, or a report that
    /// cannot allocate, is noted on stderr and the wait goes on.
    void stop();

    /// As stop(), but gives up after `limit`: then the workers are stopped
    /// anyway (after their current behaviours return), queued messages are
    /// dropped, and the report names the actors still alive. A worker found
    /// blocked inside a behaviour on a troupe primitive (a request cycle, a
    /// channel nobody writes) is not waited for: it is left there, the
    /// report says what it waits on (`workers_left`, `workers`, `cycles`),
    /// and if its behaviour ever returns the worker exits. Survivors stay
    /// allocated; their storage is theirs to free (not while a worker left
    /// blocked may still run them).
    stop_report stop_for(std::chrono::nanoseconds limit);

    /// Reports the actors alive now as a stop() that keeps waiting does (to
    /// `actor_system_config::on_stop_report`, else one line on stderr), `waited`
    /// being the wait so far: for stops built on this one
    /// (troupe::remote::world::stop). Takes each mailbox's lock briefly;
    /// never throws.
    void report_waiting(std::chrono::nanoseconds waited) noexcept;

    /// Whether stop() or stop_for() has completed.
    bool stopped() const noexcept;
    /// Number of workers (kernel threads, or user threads with
    /// actor_system_config::threads = user).
    std::size_t workers() const noexcept;
    /// Number of mailboxes.
    std::size_t mailboxes() const noexcept;
    /// Actors created and not finished (a snapshot).
    std::size_t live_actors() const noexcept;
    /// Workers parked on their futex right now, napping ones included
    /// (docs/actors.md, "Napping"; a snapshot; an idle system eventually
    /// has all of them parked).
    std::size_t parked_workers() const noexcept;
    /// Counters so far (final after stop); zero without -Dstatistics=true
    /// (`actor_statistics::built_in` says which; printing them then says
    /// "statistics not built in").
    actor_statistics statistics() const;
    /// The configuration in effect (defaults filled in).
    const actor_system_config& config() const noexcept;

    detail::executor& impl() noexcept { return *impl_; }

private:
    std::unique_ptr<detail::executor> impl_;
};

/// The system new actors join when not created by a behaviour or with an
/// explicit system: the one from start_actor_system, else the first running
/// actor_system object; nullptr if none.
actor_system* default_actor_system() noexcept;

/// Starts the default actor system (one worker per hardware thread).
void start_actor_system();
/// Starts the default actor system with `workers` workers.
void start_actor_system(std::size_t workers);
/// Starts the default actor system with an explicit configuration.
void start_actor_system(const actor_system_config& config);
/// Blocks until every actor of the default system has finished, stops it
/// and destroys it. Starting a new one afterwards is allowed.
void stop_actor_system();
/// As stop_actor_system, with a time limit (see actor_system::stop_for).
stop_report stop_actor_system_for(std::chrono::nanoseconds limit);

}  // namespace troupe
