// CAF 0.17 twin of bench/actors/matrix.cpp: Z = X * Y, one actor per row,
// each sent one message naming its rows; the plain triple loop.
#include <cmath>
#include <cstdio>
#include <vector>

#include "caf_common.hpp"

using row_atom = caf::atom_constant<caf::atom("row")>;

namespace {
long N = 1024;

caf::behavior row_actor(caf::event_based_actor* self) {
    return {[=](row_atom, std::uintptr_t xr, std::uintptr_t yp, std::uintptr_t zr) {
        const auto* x_row = reinterpret_cast<const double*>(xr);
        const auto* y = reinterpret_cast<const double*>(yp);
        auto* z_row = reinterpret_cast<double*>(zr);
        for (long j = 0; j < N; ++j) {
            double sum = 0;
            for (long k = 0; k < N; ++k) sum += x_row[k] * y[k * N + j];
            z_row[j] = sum;
        }
        self->quit();
    }};
}
}  // namespace

int main(int argc, char** argv) {
    N = bench::option(argc, argv, "n", 1024);
    const auto n = static_cast<std::size_t>(N);
    std::vector<double> x(n * n), y(n * n), z(n * n, 0.0);
    for (std::size_t i = 0; i < n * n; ++i) {
        x[i] = static_cast<double>(i % 7) * 0.5;
        y[i] = static_cast<double>(i % 11) * 0.25;
    }
    caf::actor_system_config cfg;
    caf_bench::configure(cfg, argc, argv);
    double s;
    {
        caf::actor_system system{cfg};
        std::vector<caf::actor> rows;
        rows.reserve(n);
        for (std::size_t i = 0; i < n; ++i) rows.push_back(system.spawn(row_actor));
        bench::stopwatch t;
        for (std::size_t i = 0; i < n; ++i)
            caf::anon_send(rows[i], row_atom::value, reinterpret_cast<std::uintptr_t>(&x[i * n]),
                           reinterpret_cast<std::uintptr_t>(y.data()),
                           reinterpret_cast<std::uintptr_t>(&z[i * n]));
        rows.clear();
        system.await_all_actors_done();
        s = t.seconds();
    }
    double expect = 0;
    for (std::size_t k = 0; k < n; ++k) expect += x[(n - 1) * n + k] * y[k * n + n / 2];
    if (std::fabs(expect - z[(n - 1) * n + n / 2]) > 1e-9 * std::fabs(expect) + 1e-9) {
        std::fprintf(stderr, "matrix: wrong result\n");
        return 1;
    }
    bench::result("actor_matrix", "caf", "seconds", s, caf_bench::params(argc, argv));
}
