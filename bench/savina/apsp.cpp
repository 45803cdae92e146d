// Savina "All-Pairs Shortest Path" (Floyd-Warshall): the N x N distance
// matrix of a complete graph (weights from a deterministic generator) is
// split into blocks of B x B, one actor each. At step k every block needs
// row k and column k, which live in the blocks of block-row k/B and
// block-column k/B: those send a snapshot of their block (after step k-1)
// to the blocks of their column or row; a block steps as soon as it has
// both (inputs for later steps wait in a map). Snapshots are shared
// (std::shared_ptr) between their receivers; the messages are value sends.
// Check: a checksum of the final matrix.
#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "savina.hpp"

namespace savina_apsp {

using snapshot = std::shared_ptr<const std::vector<long>>;

struct block_msg : troupe::message {
    long k;
    bool from_column;  // true: from the block in this row that holds column k
    snapshot data;
    block_msg(long kk, bool c, snapshot d) : k(kk), from_column(c), data(std::move(d)) {}
};

struct start : troupe::message {};

struct grid;
struct block_actor : troupe::actor {
    grid* g = nullptr;
    long bi = 0, bj = 0, k = 0;
    bool started = false;  // a neighbour's snapshot may come before our start
    std::vector<long> d;   // B x B, row-major
    std::map<long, std::pair<snapshot, snapshot>> inputs;  // step -> (column source, row source)
    void start_step();
    void try_steps();
    troupe::allocation receive(block_msg& m) {
        auto& in = inputs[m.k];
        (m.from_column ? in.first : in.second) = std::move(m.data);
        if (started) try_steps();
        return k == limit() ? troupe::Finished : troupe::Nodelete;
    }
    troupe::allocation receive(start&) {
        started = true;
        start_step();
        try_steps();
        return k == limit() ? troupe::Finished : troupe::Nodelete;
    }
    long limit() const;
};

struct grid {
    long n = 0, b = 0, nb = 0;
    std::vector<block_actor> blocks;  // nb x nb
    block_actor& at(long i, long j) { return blocks[static_cast<std::size_t>(i * nb + j)]; }
};

long block_actor::limit() const { return g->n; }

void block_actor::start_step() {
    const long kb = k / g->b;
    if (bj != kb && bi != kb) return;
    auto snap = std::make_shared<const std::vector<long>>(d);
    if (bj == kb)  // holds column k: the blocks of this row need it
        for (long j = 0; j < g->nb; ++j)
            if (j != bj) troupe::send<block_msg>(g->at(bi, j), k, true, snap);
    if (bi == kb)  // holds row k: the blocks of this column need it
        for (long i = 0; i < g->nb; ++i)
            if (i != bi) troupe::send<block_msg>(g->at(i, bj), k, false, snap);
}

void block_actor::try_steps() {
    const long b = g->b;
    while (k < g->n) {
        const long kb = k / b, kk = k % b;
        const std::vector<long>* col = &d;  // block (bi, kb)
        const std::vector<long>* row = &d;  // block (kb, bj)
        auto it = inputs.find(k);
        if (bj != kb) {
            if (it == inputs.end() || !it->second.first) return;
            col = it->second.first.get();
        }
        if (bi != kb) {
            if (it == inputs.end() || !it->second.second) return;
            row = it->second.second.get();
        }
        for (long i = 0; i < b; ++i) {
            const long dik = (*col)[static_cast<std::size_t>(i * b + kk)];
            for (long j = 0; j < b; ++j) {
                long& dij = d[static_cast<std::size_t>(i * b + j)];
                dij = std::min(dij, dik + (*row)[static_cast<std::size_t>(kk * b + j)]);
            }
        }
        if (it != inputs.end()) inputs.erase(it);
        ++k;
        if (k < g->n) start_step();
    }
}

SAVINA_BENCH(apsp) {
    const long n = info.size("n", 512, 128);
    const long b = info.size("block", 64, 32);
    savina::lcg rng{11};
    std::vector<long> w(static_cast<std::size_t>(n * n));
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j)
            w[static_cast<std::size_t>(i * n + j)] = i == j ? 0 : rng.below(1000) + 1;
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    grid g;
    g.n = n;
    g.b = b;
    g.nb = n / b;
    g.blocks = std::vector<block_actor>(static_cast<std::size_t>(g.nb * g.nb));
    for (long bi = 0; bi < g.nb; ++bi)
        for (long bj = 0; bj < g.nb; ++bj) {
            auto& a = g.at(bi, bj);
            a.g = &g;
            a.bi = bi;
            a.bj = bj;
            a.d.resize(static_cast<std::size_t>(b * b));
            for (long i = 0; i < b; ++i)
                for (long j = 0; j < b; ++j)
                    a.d[static_cast<std::size_t>(i * b + j)] =
                        w[static_cast<std::size_t>((bi * b + i) * n + bj * b + j)];
        }
    start go;  // carries nothing: one object for every block
    for (auto& a : g.blocks) a | go;
    sys.stop();
    const double s = t.seconds();
    std::uint64_t h = 0;
    for (auto& a : g.blocks)
        for (long v : a.d) h = savina::mix(h, static_cast<std::uint64_t>(v));
    return {s, h};
}

}  // namespace savina_apsp
