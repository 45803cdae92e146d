// CAF 0.17 twin of bench/savina/recmatmul.cpp: C = A * B by recursive
// quadrant actors down to T x T blocks.
namespace savina_recmatmul {

using block_atom = caf::atom_constant<caf::atom("block")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

struct matrices {
    long n = 0;
    std::vector<long> a, b, c;
};

struct block_state {
    int waiting = 0;
    caf::actor parent;
};

caf::behavior block_actor(caf::stateful_actor<block_state>* self, matrices* m, long threshold,
                          caf::actor parent, long* root_done) {
    self->state.parent = std::move(parent);
    auto finish = [=] {
        if (self->state.parent) self->send(self->state.parent, done_atom::value);
        else *root_done = 1;
        self->state.parent = nullptr;
        self->quit();
    };
    return {[=](block_atom, long row, long col, long size) {
                if (size <= threshold) {
                    const long n = m->n;
                    for (long i = row; i < row + size; ++i)
                        for (long j = col; j < col + size; ++j) {
                            long sum = 0;
                            for (long k = 0; k < n; ++k) sum += m->a[i * n + k] * m->b[k * n + j];
                            m->c[i * n + j] = sum;
                        }
                    finish();
                    return;
                }
                const long h = size / 2;
                for (long q = 0; q < 4; ++q)
                    self->send(self->spawn(block_actor, m, threshold,
                                           caf::actor_cast<caf::actor>(self), root_done),
                               block_atom::value, row + (q / 2) * h, col + (q % 2) * h, h);
                self->state.waiting = 4;
            },
            [=](done_atom) {
                if (--self->state.waiting == 0) finish();
            }};
}

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
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    long done = 0;
    bench::stopwatch t;
    caf::anon_send(system.spawn(block_actor, &m, threshold, caf::actor{}, &done), block_atom::value,
                   0L, 0L, n);
    system.await_all_actors_done();
    const double s = t.seconds();
    std::uint64_t h = static_cast<std::uint64_t>(done);
    for (long v : m.c) h = savina::mix(h, static_cast<std::uint64_t>(v));
    return {s, h};
}

}  // namespace savina_recmatmul
