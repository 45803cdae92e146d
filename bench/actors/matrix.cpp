// Matrix multiply (Parsons, "Matrix Multiply"): Z = X * Y for N x N doubles,
// one actor per row of Z, each sent one message naming its rows; the
// kernel is the plain triple loop (the same in the CAF twin). Prints
// seconds, and checks one entry against a direct computation.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "troupe_bench.hpp"

namespace {
long N = 1024;

struct row_msg : troupe::message {
    const double* x_row = nullptr;  // N values
    const double* y = nullptr;      // N x N, row-major
    double* z_row = nullptr;        // N values
};

struct row_actor : troupe::actor {
    troupe::allocation receive(row_msg& m) {
        for (long j = 0; j < N; ++j) {
            double sum = 0;
            for (long k = 0; k < N; ++k) sum += m.x_row[k] * m.y[k * N + j];
            m.z_row[j] = sum;
        }
        return troupe::Finished;
    }
};
}  // namespace

int main(int argc, char** argv) {
    N = bench::option(argc, argv, "n", 1024);
    const troupe::actor_system_config cfg = bench::config(argc, argv);
    const auto n = static_cast<std::size_t>(N);
    std::vector<double> x(n * n), y(n * n), z(n * n, 0.0);
    for (std::size_t i = 0; i < n * n; ++i) {
        x[i] = static_cast<double>(i % 7) * 0.5;
        y[i] = static_cast<double>(i % 11) * 0.25;
    }
    troupe::actor_system sys{cfg};
    std::unique_ptr<row_actor[]> rows{new row_actor[n]};
    std::unique_ptr<row_msg[]> msgs{new row_msg[n]};
    bench::stopwatch t;
    for (std::size_t i = 0; i < n; ++i) {
        msgs[i].x_row = &x[i * n];
        msgs[i].y = y.data();
        msgs[i].z_row = &z[i * n];
        rows[i] | msgs[i];
    }
    sys.stop();
    const double s = t.seconds();
    double expect = 0;
    for (std::size_t k = 0; k < n; ++k) expect += x[(n - 1) * n + k] * y[k * n + n / 2];
    if (std::fabs(expect - z[(n - 1) * n + n / 2]) > 1e-9 * std::fabs(expect) + 1e-9) {
        std::fprintf(stderr, "matrix: wrong result\n");
        return 1;
    }
    bench::result("actor_matrix", "troupe", "seconds", s,
                  bench::params(static_cast<long>(cfg.workers)));
}
