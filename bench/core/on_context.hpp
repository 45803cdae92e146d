#pragma once
// The --ctx option of the single-thread core benchmarks: where the measured
// loop runs (the twins have only the OS thread).
#include <string>

#include <troupe/cluster.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

namespace bench {

/// Runs `body` (which returns ns per op) on this OS thread for ctx "os", or
/// inside a user thread of a 1-processor cluster for ctx "user", and returns
/// its result; any other ctx stops the program with `bad_ctx` (bench::fail).
template <class Body>
double on_context(const std::string& ctx, const char* bad_ctx, Body body) {
    double ns = 0;
    if (ctx == "user") {
        troupe::cluster pool{1};
        troupe::thread t{pool, [&] { ns = body(); }};
        t.join();
    } else if (ctx == "os") {
        ns = body();
    } else {
        bench::fail(bad_ctx);
    }
    return ns;
}

}  // namespace bench
