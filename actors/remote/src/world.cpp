// The world: MPI start-up and shut-down, naming, collective waits.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "engine.hpp"
#include "troupe/defaults/remote.hpp"
#include "troupe/thread.hpp"

namespace troupe::remote {

namespace {
std::atomic<bool> world_exists{false};  // MPI allows one world per process

// Waits for `r` to complete, sleeping between tests (MPI's blocking waits
// busy-poll, which an idle rank must not do).
void wait_sleeping(MPI_Request& r) {
    auto poll = defaults::remote::collective_first_poll;
    for (;;) {
        int done = 0;
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (done) return;
        this_thread::sleep_for(poll);
        poll = std::min(poll * 2, defaults::remote::collective_max_poll);
    }
}
}  // namespace

namespace detail {
void wait_collective(engine& e, MPI_Request& r, std::uint64_t k, const char* what) {
    auto poll = defaults::remote::collective_first_poll;
    for (;;) {
        int done = 0;
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (done) return;
        // A rank that ended without entering this collective never will.
        // The request stays posted (MPI cannot cancel a collective), and
        // every later collective fails at once (begin_collective).
        if (const int gone = e.collective_blocked(k); gone >= 0) throw e.lost_error(gone, what);
        this_thread::sleep_for(poll);
        poll = std::min(poll * 2, defaults::remote::collective_max_poll);
    }
}
}  // namespace detail

world::world(int& argc, char**& argv, world_options options) {
    start(&argc, &argv, std::move(options));
}
world::world(world_options options) { start(nullptr, nullptr, std::move(options)); }

void world::start(int* argc, char*** argv, world_options options) {
    if (world_exists.exchange(true))
        throw remote_error(
            "troupe::remote: a world already exists in this process (one per process)");
    // Whether a launcher (mpirun, mpiexec, srun) started us: read before
    // MPI_Init, which sets some of these in a singleton too.
    const bool launched =
        std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
    try {
        int initialised = 0;
        MPI_Initialized(&initialised);
        int provided = 0;
        if (initialised) {
            MPI_Query_thread(&provided);
        } else {
            MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
            owns_mpi_ = true;
        }
        if (provided < MPI_THREAD_MULTIPLE)
            throw remote_error(
                "troupe::remote: MPI provides thread level " + std::to_string(provided) +
                ", not MPI_THREAD_MULTIPLE, which the progress engine needs" +
                (initialised
                     ? " (initialise MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...))"
                     : ""));
        if (auto conflicts = detail::name_conflicts(); !conflicts.empty()) {
            std::string all = "troupe::remote: ";
            for (auto& c : conflicts) all += c + "; ";
            throw remote_error(all);
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
        // Started without a launcher (Open MPI's singleton): say so once,
        // since every remote send then stays in this process.
        const char* ess = std::getenv("OMPI_MCA_ess");  // Open MPI's singleton sets it
        if (size_ == 1 && (!launched || (ess && std::string_view{ess} == "singleton"))) {
            std::fprintf(stderr,
                         "troupe::remote: this job is a single rank (started without mpirun?); "
                         "run `mpirun -np N %s` for N ranks\n",
                         argv && *argv && **argv ? (*argv)[0] : "program");
            std::fflush(stderr);
        }
        const detail::binding cores = detail::probe_binding();
        engine_ = std::make_unique<detail::engine>(rank_, size_, std::move(options));
        engine_->set_binding(cores);
    } catch (...) {
        if (owns_mpi_) MPI_Finalize();
        world_exists = false;
        throw;
    }
}

world::~world() {
    // Goodbye first: whatever other ranks still await from this one fails
    // there at once (they may be far from their own end).
    engine_->say_goodbye(engine_->collectives_entered());
    // Every rank's sends complete before any engine stops receiving (sends
    // to ranks that ended do not count: nobody receives them).
    engine_->drain_sends();
    // On a communicator of its own: it never matches a barrier or a stop
    // round of a rank still running (which fails instead, naming this rank).
    MPI_Request r;
    MPI_Ibarrier(engine_->final_comm, &r);
    wait_sleeping(r);
    engine_.reset();
    if (owns_mpi_) MPI_Finalize();
    world_exists = false;
}

int world::rank() const noexcept { return rank_; }
int world::size() const noexcept { return size_; }

void world::barrier() {
    const std::uint64_t k = engine_->begin_collective("world::barrier()");
    MPI_Request r;
    MPI_Ibarrier(engine_->collective, &r);
    detail::wait_collective(*engine_, r, k, "world::barrier()");
}

std::uint64_t world::frames_sent() const noexcept {
    return engine_->traffic.frames_sent.load(std::memory_order_relaxed);
}
std::uint64_t world::frames_received() const noexcept {
    return engine_->traffic.frames_received.load(std::memory_order_relaxed);
}

void world::inject_raw_for_test(int rank, const void* bytes, std::size_t n) {
    engine_->send_raw(rank, bytes, n);
}

void world::set_batch_limit_for_test(std::size_t bytes) noexcept {
    engine_->set_batch_limit_for_test(bytes);
}

std::string world::not_found_text(int rank, const std::string& name, const std::string& wanted,
                                  const detail::lookup_answer& a) {
    std::string s = "troupe::remote: lookup<" + wanted + ">(" + std::to_string(rank) + ", \"" +
                    name + "\"): rank " + std::to_string(rank) +
                    " publishes no actor under that name";
    if (a.published.empty())
        return s +
               " (it publishes none; publish before other ranks look up, e.g. "
               "publish, then world::barrier())";
    s += " (it publishes:";
    for (auto& n : a.published) s += " \"" + n + "\"";
    return s + ")";
}

}  // namespace troupe::remote
