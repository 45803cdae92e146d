#pragma once
/// The world: this process's place in an MPI job, and its progress engine.
///
///     int main(int argc, char** argv) {
///         troupe::remote::world w{argc, argv};         // MPI_Init_thread (or adopt)
///         troupe::actor_system sys{2};
///         account mine;
///         w.publish("account." + std::to_string(w.rank()), mine);
///         w.barrier();                                  // every rank has published
///         auto peer = w.lookup<account>((w.rank() + 1) % w.size(),
///                                       "account." + std::to_string((w.rank() + 1) % w.size()));
///         peer | deposit{...};
///         ...
///         w.stop(sys);                                  // collective: every rank's actors
///     }                                                 // finished, nothing in flight
///
/// One world per process. It initialises MPI with MPI_THREAD_MULTIPLE (or
/// adopts an MPI the program initialised itself, which must provide that
/// level), works on its own duplicates of MPI_COMM_WORLD (the program's own
/// MPI traffic cannot collide with it), and runs one progress-engine thread.
/// The engine moves frames between ranks with non-blocking MPI and delivers
/// incoming messages to actors through the executor's external send path;
/// when there is nothing to do it parks (woken by local sends and replies)
/// and polls the network at an exponentially growing interval (50 µs up to
/// 8 ms, see troupe/defaults/remote.hpp), so an idle rank uses under 1% of a
/// core (measured by bench/remote/idle.cpp); the first message after a long
/// idle spell may wait for the next poll. Destroying the world stops the
/// engine and, if the world initialised MPI, finalises it (after a barrier:
/// destruction is collective).
///
/// A rank that ends (its world is destroyed: it returned from main, early or
/// late) says goodbye: every ask, lookup, send and collective of another
/// rank that needs it fails at once with rank_lost naming it. A rank that
/// dies without that takes the whole job down (MPI's default error handler
/// aborts every rank); see docs/remote.md for fault tolerance.
///
/// The handlers of world_options, and the decoders of received messages,
/// run on whichever thread runs the progress pass: the engine thread, an
/// idle processor or actor worker, or an OS thread spinning in park() while
/// it waits for its own ask's reply (which may hold locks of its own). They
/// must not block and must not take a lock a thread of the program may hold
/// while it waits for a remote reply.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "troupe/actor_system.hpp"
#include "troupe/future.hpp"
#include "troupe/remote/errors.hpp"
#include "troupe/remote/ref.hpp"

namespace troupe::remote {

/// Settings of a world.
struct world_options {
    /// Called by the progress pass (see above) with bad input from the network (an
    /// unknown message name, a truncated or malformed frame); the frame is
    /// dropped. Default: print the error and MPI_Abort the job (bad input
    /// means the ranks disagree about the program). Must not block.
    std::function<void(const network_error&)> on_error;
    /// Called by the progress pass with a message (a tell) for an actor
    /// of this rank that was published and is gone (destroyed, or
    /// finished); the message is dropped. An ask for such an actor is not
    /// reported here: it fails at the asker with actor_gone. Default: one
    /// line on stderr for the first message to each gone actor (later ones
    /// are counted and summed up when the world ends); the job goes on.
    /// Must not block.
    std::function<void(const actor_gone&)> on_gone;
    /// Called once per rank that ends (its world is destroyed) while this
    /// rank's world still runs, with a rank_lost naming it, when its
    /// goodbye arrives; by then every ask and lookup awaiting it has failed
    /// with rank_lost. Runs where on_gone runs; must not block. Default:
    /// nothing (the failures themselves name the rank).
    std::function<void(const rank_lost&)> on_rank_lost;
};

/// The outcome of world::stop_for on this rank.
struct remote_stop_report {
    /// Every rank's actors finished and no message was in flight.
    bool finished = true;
    /// This rank's local report (survivors) when it gave up.
    stop_report local;
    /// Messages sent and not yet received, summed over the ranks, when it
    /// gave up.
    std::uint64_t in_flight = 0;
    /// "rank 1: 2 actors still alive: ..." (empty when finished).
    std::string to_string() const;
};

class world {
public:
    /// Initialises MPI (MPI_Init_thread, MPI_THREAD_MULTIPLE) unless the
    /// program already did (then adopts it) and starts the progress engine.
    /// Throws remote_error if MPI cannot provide MPI_THREAD_MULTIPLE or a
    /// world already exists in this process. Collective.
    world(int& argc, char**& argv, world_options options = {});
    /// As above, without command-line arguments.
    explicit world(world_options options = {});
    world(const world&) = delete;
    world& operator=(const world&) = delete;
    /// Says goodbye to every other rank (what they still await from this one
    /// fails there with rank_lost), stops the engine (after its queued frames
    /// are sent), waits for every rank (a barrier of its own, which never
    /// matches a barrier() or stop() of a rank still running) and finalises
    /// MPI if this world initialised it. Collective: every rank destroys its
    /// world.
    ~world();

    /// This process's rank in MPI_COMM_WORLD.
    int rank() const noexcept;
    /// The number of ranks.
    int size() const noexcept;

    /// Makes `a` reachable from every rank under `name` (unique per rank).
    /// The actor must stay alive while other ranks may send to it. Throws
    /// std::invalid_argument if the name is taken on this rank.
    template <class A>
    requires std::derived_from<A, actor>
    void publish(std::string_view name, A& a) {
        detail::publish(engine(), name, a, troupe::detail::type_name<A>());
    }

    /// Asks `rank` for the actor published there under `name` and returns a
    /// reference once the answer arrives. The future throws lookup_error if
    /// nothing is published under that name (naming the rank, the name and
    /// what is published there; or that the actor published under it was
    /// destroyed) or an actor of another type is (naming both types), and
    /// rank_lost if `rank` has ended (at once, or when its goodbye arrives).
    /// Throws std::out_of_range for a bad rank. Never blocks.
    template <class A>
    requires std::derived_from<A, actor> std::shared_ptr<future<remote_ref<A>>> lookup_async(
        int rank, std::string_view name) {
        auto f = std::make_shared<future<remote_ref<A>>>();
        std::string wanted{troupe::detail::type_name<A>()};
        std::string n{name};
        detail::engine& e = engine();
        detail::lookup(e, rank, name, [f, wanted, n, rank, &e](const detail::lookup_answer& a) {
            if (!a.lost.empty())
                f->fulfil_exception(
                    std::make_exception_ptr(rank_lost(rank, rank_lost::reason::ended, a.lost)));
            else if (a.gone)
                f->fulfil_exception(std::make_exception_ptr(lookup_error(
                    "troupe::remote: lookup<" + wanted + ">(" + std::to_string(rank) + ", \"" + n +
                    "\"): rank " + std::to_string(rank) + " published \"" + n + "\" (type " +
                    a.type + "), and that actor has been destroyed")));
            else if (!a.found)
                f->fulfil_exception(
                    std::make_exception_ptr(lookup_error(not_found_text(rank, n, wanted, a))));
            else if (a.type != wanted)
                f->fulfil_exception(std::make_exception_ptr(lookup_error(
                    "troupe::remote: lookup<" + wanted + ">(" + std::to_string(rank) + ", \"" + n +
                    "\"): rank " + std::to_string(rank) + " publishes \"" + n +
                    "\" as an actor of type " + a.type + ", not the requested type " + wanted)));
            else f->fulfil(remote_ref<A>(e, rank, a.id));
        });
        return f;
    }
    /// lookup_async(rank, name)->get(): parks the caller (any context) until
    /// the answer arrives; throws lookup_error as described there.
    template <class A>
    requires std::derived_from<A, actor> remote_ref<A> lookup(int rank, std::string_view name) {
        return lookup_async<A>(rank, name)->get();
    }

    /// Waits until every rank has called barrier (collective). Sleeps while
    /// waiting (MPI_Ibarrier polled with back-off), so it does not spin.
    /// Says nothing about messages: one sent before it may still be in
    /// flight or queued after it (ask the actor to know it was processed).
    /// Throws rank_lost if a rank ended without entering it (this barrier
    /// then never completes; every later barrier and stop throws too).
    void barrier();

    /// Collective: waits until every rank's actors of `sys` have finished
    /// and no remote message is in flight anywhere (repeated global sums of
    /// sent and received messages until two consecutive rounds agree and
    /// balance), then stops `sys`. Sleeps while waiting. Blocks forever on a
    /// forgotten poison pill, like actor_system::stop, but never silently:
    /// after each `sys.config().stop_report_period` (default 10 s; zero:
    /// never) every rank with live actors reports them as actor_system::stop
    /// does (to `on_stop_report`, which may send poison pills, else stderr)
    /// and rank 0 prints how many ranks are busy and how many batches are in
    /// flight. Use stop_for to bound it. Throws rank_lost if a rank ended
    /// without taking part (as barrier).
    void stop(actor_system& sys);
    /// stop(default_actor_system()).
    void stop();
    /// As stop, but gives up once `limit` has passed on rank 0: then every
    /// rank stops its system with actor_system::stop_for(0) and prints (and
    /// returns) its survivors, prefixed with its rank.
    remote_stop_report stop_for(actor_system& sys, std::chrono::nanoseconds limit);

    /// Messages this rank's engine has sent / received so far (frames of
    /// every kind; for tests and statistics).
    std::uint64_t frames_sent() const noexcept;
    std::uint64_t frames_received() const noexcept;

    /// Test hook: sends `bytes` to `rank` as one raw batch, bypassing the
    /// encoder (tests inject malformed frames with it).
    void inject_raw_for_test(int rank, const void* bytes, std::size_t n);
    /// Test hook: lowers the most bytes one unsent batch (one MPI message)
    /// may hold on this rank, 2 GiB - 8 by default, so that tests reach
    /// the limit with small messages (0: the default). Call it before
    /// sending.
    void set_batch_limit_for_test(std::size_t bytes) noexcept;

    detail::engine& engine() noexcept { return *engine_; }

private:
    static std::string not_found_text(int rank, const std::string& name, const std::string& wanted,
                                      const detail::lookup_answer& a);
    void start(int* argc, char*** argv, world_options options);

    std::unique_ptr<detail::engine> engine_;
    bool owns_mpi_ = false;
    int rank_ = 0, size_ = 1;
};

}  // namespace troupe::remote
