#pragma once
// Shared helpers of the remote tests (tests/remote/remote_main.cpp owns the
// one world per process).
#include <doctest/doctest.h>
// The C API only (the deprecated C++ bindings do not compile warning-free).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <string>
#include <vector>

#include "troupe/actors.hpp"
#include "troupe/remote.hpp"

namespace remote_test {

/// This process's world (created by main for the whole run).
troupe::remote::world& world();
/// Network errors reported on this rank so far (the test world records them
/// instead of aborting the job).
std::vector<std::string> network_errors();
void clear_network_errors();
/// Messages for gone actors dropped on this rank so far (world_options::on_gone).
std::vector<troupe::remote::actor_gone> gone_reports();
void clear_gone_reports();

/// A value summed over every rank.
inline long sum_over_ranks(long v) {
    long s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

}  // namespace remote_test
