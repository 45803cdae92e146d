// The world: MPI start-up and shut-down, naming, collective waits.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "engine.hpp"
#include "troupe/remote/remote_defaults.hpp"
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
void wait_request(MPI_Request& r) { wait_sleeping(r); }
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
        engine_ = std::make_unique<detail::engine>(rank_, size_, std::move(options));
    } catch (...) {
        if (owns_mpi_) MPI_Finalize();
        world_exists = false;
        throw;
    }
}

world::~world() {
    // Every rank's sends complete before any engine stops receiving.
    engine_->drain_sends();
    barrier();
    engine_.reset();
    if (owns_mpi_) MPI_Finalize();
    world_exists = false;
}

int world::rank() const noexcept { return rank_; }
int world::size() const noexcept { return size_; }

void world::barrier() {
    MPI_Request r;
    MPI_Ibarrier(engine_->collective, &r);
    wait_sleeping(r);
}

std::uint64_t world::frames_sent() const noexcept {
    return engine_->frames_sent.load(std::memory_order_relaxed);
}
std::uint64_t world::frames_received() const noexcept {
    return engine_->frames_received.load(std::memory_order_relaxed);
}

void world::inject_raw_for_test(int rank, const void* bytes, std::size_t n) {
    engine_->send_raw(rank, bytes, n);
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
