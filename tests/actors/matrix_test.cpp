// Matrix multiply with one actor per row, checked against a sequential
// multiply (Cforall test "matrixMultiply", which did not check the result).
#include <memory>
#include <vector>

#include "actor_fixture.hpp"

using troupe_test::on_workers;

namespace {

struct row_msg : troupe::message {
    const long* x_row = nullptr;
    const long* y = nullptr;
    long* z_row = nullptr;
    long n = 0;
};

struct row_actor : troupe::actor {
    troupe::allocation receive(row_msg& m) {
        for (long j = 0; j < m.n; ++j) {
            long sum = 0;
            for (long k = 0; k < m.n; ++k) sum += m.x_row[k] * m.y[k * m.n + j];
            m.z_row[j] = sum;
        }
        return troupe::Finished;
    }
};

}  // namespace

TEST_CASE("Z = X * Y by row actors equals the sequential product") {
    on_workers([](std::size_t w) {
        const long n = troupe_test::sanitized ? 48 : 160;
        const auto un = static_cast<std::size_t>(n);
        std::vector<long> x(un * un), y(un * un), z(un * un, -1), expect(un * un, 0);
        for (std::size_t i = 0; i < un * un; ++i) {
            x[i] = static_cast<long>(i % 13) - 6;
            y[i] = static_cast<long>((i * 7) % 17) - 8;
        }
        for (std::size_t i = 0; i < un; ++i)
            for (std::size_t j = 0; j < un; ++j)
                for (std::size_t k = 0; k < un; ++k)
                    expect[i * un + j] += x[i * un + k] * y[k * un + j];
        troupe::actor_system sys{w};
        std::unique_ptr<row_actor[]> rows{new row_actor[un]};
        std::unique_ptr<row_msg[]> msgs{new row_msg[un]};
        for (std::size_t i = 0; i < un; ++i) {
            msgs[i].x_row = &x[i * un];
            msgs[i].y = y.data();
            msgs[i].z_row = &z[i * un];
            msgs[i].n = n;
            rows[i] | msgs[i];
        }
        sys.stop();
        CHECK(z == expect);
    });
}
