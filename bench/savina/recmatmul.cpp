// Savina "Recursive Matrix Multiplication": C = A * B for N x N integer
// matrices; an actor for a block of C larger than the threshold T splits
// it into four quadrants, creates a child actor for each and reports to
// its parent when all four have; a block of at most T x T rows and columns
// is computed directly. Actors and messages are created with new and freed
// by the runtime. Check: a checksum of C.
#include <vector>

#include "savina.hpp"

namespace savina_recmatmul {

struct matrices {
    long n = 0;
    std::vector<long> a, b, c;
};

struct block_actor;
struct block_msg : troupe::message {
    long row, col, size;
    block_msg(long r, long c, long s) : row(r), col(c), size(s) {}
};
struct done_msg : troupe::message {};

struct block_actor : troupe::actor {
    matrices* m;
    long threshold;
    block_actor* parent;
    long* root_done;
    int waiting = 0;
    block_actor(matrices* mm, long t, block_actor* p, long* r)
        : m(mm), threshold(t), parent(p), root_done(r) {}

    troupe::allocation finish() {
        if (parent != nullptr) {
            // A value send: a message member of this actor would be freed
            // with it (Delete) while still queued at the parent.
            troupe::send<done_msg>(*parent);
            return troupe::Delete;
        }
        *root_done = 1;
        return troupe::Finished;
    }
    troupe::allocation receive(block_msg& w) {
        if (w.size <= threshold) {
            const long n = m->n;
            for (long i = w.row; i < w.row + w.size; ++i)
                for (long j = w.col; j < w.col + w.size; ++j) {
                    long sum = 0;
                    for (long k = 0; k < n; ++k) sum += m->a[i * n + k] * m->b[k * n + j];
                    m->c[i * n + j] = sum;
                }
            return finish();
        }
        const long h = w.size / 2;
        for (long q = 0; q < 4; ++q)
            troupe::send<block_msg>(*new block_actor{m, threshold, this, nullptr},
                                    w.row + (q / 2) * h, w.col + (q % 2) * h, h);
        waiting = 4;
        return troupe::Nodelete;
    }
    troupe::allocation receive(done_msg&) {
        if (--waiting > 0) return troupe::Nodelete;
        return finish();
    }
};

SAVINA_BENCH(recmatmul) {
    const long n = info.size("n", 512, 128);
    const long threshold = info.size("threshold", 32, 32);
    matrices m;
    m.n = n;
    m.a.resize(static_cast<std::size_t>(n * n));
    m.b.resize(static_cast<std::size_t>(n * n));
    m.c.assign(static_cast<std::size_t>(n * n), 0);
    for (long i = 0; i < n * n; ++i) {
        m.a[static_cast<std::size_t>(i)] = i % 7;
        m.b[static_cast<std::size_t>(i)] = i % 11;
    }
    troupe::actor_system sys{savina::config(info)};
    long done = 0;
    bench::stopwatch t;
    block_actor root{&m, threshold, nullptr, &done};
    troupe::send<block_msg>(root, 0L, 0L, n);
    sys.stop();
    const double s = t.seconds();
    std::uint64_t h = static_cast<std::uint64_t>(done);
    for (long v : m.c) h = savina::mix(h, static_cast<std::uint64_t>(v));
    return {s, h};
}

}  // namespace savina_recmatmul
