// Collective termination: rounds of global sums until every rank's actors
// have finished and no message is in flight (two consecutive rounds agree).
#include <chrono>
#include <cstdio>

#include "engine.hpp"
#include "troupe/defaults/remote.hpp"
#include "troupe/thread.hpp"

namespace troupe::remote {

namespace detail {
void wait_collective(engine& e, MPI_Request& r, std::uint64_t k, const char* what);
}

namespace {

enum : int { busy = 0, sent = 1, received = 2, give_up = 3, busy_ranks = 4, slots = 5 };

// This rank's counts. Read order matters: work moves from "busy" (a live
// actor, an unanswered request, a queued frame) to "sent" to "received",
// and each step is published (seq_cst) before the previous one is cleared,
// so reading busy before sent before received never misses a message.
void snapshot(detail::engine& e, actor_system& sys, std::uint64_t out[slots]) {
    out[busy] = e.pending_replies.load(std::memory_order_seq_cst) + sys.live_actors();
    out[busy] += e.busy_sending() ? 1 : 0;
    out[sent] = e.traffic.batches_sent.load(std::memory_order_seq_cst);
    out[received] = e.traffic.batches_received.load(std::memory_order_seq_cst);
    out[busy_ranks] = out[busy] != 0 ? 1 : 0;
}

// stop still waiting after `waited`: this rank's survivors as
// actor_system::stop reports them (if it has any), and on rank 0 one line
// for the job.
void report_waiting(detail::engine& e, actor_system& sys, int rank,
                    const std::uint64_t global[slots], std::chrono::nanoseconds waited) {
    if (sys.live_actors() != 0) {
        if (!sys.config().on_stop_report) {  // the hook gets the report alone
            std::fprintf(stderr, "troupe::remote: rank %d: its actors, below\n", rank);
            std::fflush(stderr);
        }
        sys.report_waiting(waited);
        if (!sys.config().on_stop_report) {
            // The request cycles across ranks through this rank's actors
            // (the system's report names the local ones).
            try {
                bool complete = true;
                for (const std::string& c : e.cycles_now(complete))
                    std::fprintf(stderr, "troupe::remote: rank %d: %s\n", rank, c.c_str());
                std::fflush(stderr);
            } catch (...) {}
        }
    }
    if (rank != 0) return;
    const std::uint64_t in_flight =
        global[sent] >= global[received] ? global[sent] - global[received] : 0;
    std::fprintf(stderr,
                 "troupe::remote: rank 0: world stop still waiting after %.1f s: %llu rank(s) "
                 "busy (live actors, unanswered requests or unsent frames), %llu batch(es) in "
                 "flight\n",
                 std::chrono::duration<double>(waited).count(),
                 static_cast<unsigned long long>(global[busy_ranks]),
                 static_cast<unsigned long long>(in_flight));
    std::fflush(stderr);
}

}  // namespace

remote_stop_report world::stop_for(actor_system& sys, std::chrono::nanoseconds limit) {
    detail::engine& e = engine();
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t before[slots] = {};
    bool before_quiet = false;
    auto poll = defaults::remote::collective_first_poll;
    // Never silent, as actor_system::stop: a report after each period.
    const std::chrono::nanoseconds period = sys.config().stop_report_period;
    auto next_report =
        period.count() > 0 ? start + period : std::chrono::steady_clock::time_point::max();
    for (;;) {
        std::uint64_t local[slots], global[slots];
        snapshot(e, sys, local);
        local[give_up] = (rank_ == 0 && std::chrono::steady_clock::now() - start >= limit) ? 1 : 0;
        const std::uint64_t k = e.begin_collective("world::stop (a termination round)");
        MPI_Request r;
        MPI_Iallreduce(local, global, slots, MPI_UINT64_T, MPI_SUM, e.collective, &r);
        detail::wait_collective(e, r, k, "world::stop (a termination round)");
        const bool quiet = global[busy] == 0 && global[sent] == global[received];
        // Two consecutive quiet rounds with the same counts: nothing was
        // sent between them, so nothing is in flight and nobody is working.
        if (quiet && before_quiet && global[sent] == before[sent] &&
            global[received] == before[received]) {
            sys.stop();  // every actor has finished: returns at once
            return {};
        }
        if (global[give_up]) {
            remote_stop_report rep;
            rep.finished = false;
            rep.in_flight = global[sent] >= global[received] ? global[sent] - global[received] : 0;
            rep.local = sys.stop_for(std::chrono::nanoseconds::zero());
            std::fprintf(stderr, "troupe::remote: rank %d: stop gave up: %s\n", rank_,
                         rep.to_string().c_str());
            return rep;
        }
        // Each rank by its own clock (about the same time everywhere).
        if (const auto now = std::chrono::steady_clock::now(); now >= next_report) {
            report_waiting(e, sys, rank_, global, now - start);
            next_report = now + period;
        }
        std::copy(global, global + slots, before);
        before_quiet = quiet;
        if (quiet) {
            poll = defaults::remote::collective_first_poll;  // confirm quickly
        } else {
            this_thread::sleep_for(poll);
            poll = std::min(poll * 2, defaults::remote::collective_max_poll);
        }
    }
}

void world::stop(actor_system& sys) { (void)stop_for(sys, std::chrono::nanoseconds::max()); }

void world::stop() {
    actor_system* sys = default_actor_system();
    if (!sys)
        throw std::logic_error("troupe::remote: world::stop(): no default actor system is running");
    stop(*sys);
}

std::string remote_stop_report::to_string() const {
    if (finished) return {};
    std::string s = local.finished ? std::string{"every actor here finished"} : local.to_string();
    if (in_flight)
        s += "; " + std::to_string(in_flight) +
             " batch(es) of messages still in flight between ranks";
    return s;
}

}  // namespace troupe::remote
