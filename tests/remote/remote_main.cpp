// main() of the remote tests: one world per process (MPI cannot be
// initialised twice), doctest, and a watchdog that aborts the job if a
// test deadlocks instead of hanging CI.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "remote_fixture.hpp"

namespace remote_test {

namespace {
troupe::remote::world* the_world = nullptr;
std::vector<std::string>* errors = nullptr;
std::vector<troupe::remote::actor_gone>* gone = nullptr;
std::mutex errors_mutex;
}  // namespace

troupe::remote::world& world() { return *the_world; }

std::vector<std::string> network_errors() {
    std::lock_guard g{errors_mutex};
    return *errors;
}

void clear_network_errors() {
    std::lock_guard g{errors_mutex};
    errors->clear();
}

std::vector<troupe::remote::actor_gone> gone_reports() {
    std::lock_guard g{errors_mutex};
    return *gone;
}

void clear_gone_reports() {
    std::lock_guard g{errors_mutex};
    gone->clear();
}

}  // namespace remote_test

int main(int argc, char** argv) {
    using namespace remote_test;
    std::vector<std::string> errs;
    errors = &errs;
    std::vector<troupe::remote::actor_gone> gones;
    gone = &gones;
    long limit = 60;
    if (const char* env = std::getenv("TROUPE_WATCHDOG_SECONDS"))
        limit = std::strtol(env, nullptr, 10);
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread dog([&] {
        std::unique_lock lk{m};
        if (!cv.wait_for(lk, std::chrono::seconds(limit), [&] { return done; })) {
            std::fprintf(stderr,
                         "\nWATCHDOG: %s did not finish within %ld s (deadlock?); aborting\n",
                         argv[0], limit);
            std::fflush(stderr);
            std::abort();
        }
    });
    int status;
    {
        troupe::remote::world_options opts;
        opts.on_error = [](const troupe::remote::network_error& e) {
            std::lock_guard g{errors_mutex};
            errors->push_back(e.what());
        };
        opts.on_gone = [](const troupe::remote::actor_gone& e) {
            std::lock_guard g{errors_mutex};
            gone->push_back(e);
        };
        troupe::remote::world w{argc, argv, std::move(opts)};
        the_world = &w;
        doctest::Context ctx;
        ctx.applyCommandLine(argc, argv);
        // Only rank 0 reports successes; every rank reports failures.
        if (w.rank() != 0) ctx.setOption("minimal", true);
        status = ctx.run();
        // Every rank must agree before the world (collective) goes away.
        int mine = status, worst = 0;
        MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        status = worst;
        the_world = nullptr;
    }
    {
        std::lock_guard g{m};
        done = true;
    }
    cv.notify_one();
    dog.join();
    return status;
}
