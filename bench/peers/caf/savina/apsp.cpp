// CAF 0.17 twin of bench/savina/apsp.cpp: blocked Floyd-Warshall, one
// actor per B x B block; the blocks holding row or column k send their
// snapshot to their column or row. One caf::message per snapshot is sent
// to all its receivers (CAF messages are copy-on-write, so they share it).
namespace savina_apsp {

using block_atom = caf::atom_constant<caf::atom("block")>;
using grid_atom = caf::atom_constant<caf::atom("grid")>;

struct block_state {
    std::vector<caf::actor> grid;  // nb x nb
    long k = 0;
    std::vector<long> d;
    std::map<long, std::pair<caf::message, caf::message>> inputs;  // step -> (column, row)
};

caf::behavior block_actor(caf::stateful_actor<block_state>* self, long n, long b, long bi, long bj,
                          std::vector<long> initial, std::vector<long>* out) {
    self->state.d = std::move(initial);
    const long nb = n / b;
    auto start_step = [=] {
        auto& st = self->state;
        const long kb = st.k / b;
        if (bj != kb && bi != kb) return;
        if (bj == kb) {
            auto msg = caf::make_message(block_atom::value, st.k, true, st.d);
            for (long j = 0; j < nb; ++j)
                if (j != bj) self->send(st.grid[static_cast<std::size_t>(bi * nb + j)], msg);
        }
        if (bi == kb) {
            auto msg = caf::make_message(block_atom::value, st.k, false, st.d);
            for (long i = 0; i < nb; ++i)
                if (i != bi) self->send(st.grid[static_cast<std::size_t>(i * nb + bj)], msg);
        }
    };
    auto try_steps = [=] {
        auto& st = self->state;
        while (st.k < n) {
            const long kb = st.k / b, kk = st.k % b;
            const std::vector<long>* col = &st.d;
            const std::vector<long>* row = &st.d;
            auto it = st.inputs.find(st.k);
            if (bj != kb) {
                if (it == st.inputs.end() || it->second.first.empty()) return;
                col = &it->second.first.get_as<std::vector<long>>(3);
            }
            if (bi != kb) {
                if (it == st.inputs.end() || it->second.second.empty()) return;
                row = &it->second.second.get_as<std::vector<long>>(3);
            }
            for (long i = 0; i < b; ++i) {
                const long dik = (*col)[static_cast<std::size_t>(i * b + kk)];
                for (long j = 0; j < b; ++j) {
                    long& dij = st.d[static_cast<std::size_t>(i * b + j)];
                    dij = std::min(dij, dik + (*row)[static_cast<std::size_t>(kk * b + j)]);
                }
            }
            if (it != st.inputs.end()) st.inputs.erase(it);
            ++st.k;
            if (st.k < n) start_step();
        }
        for (long i = 0; i < b; ++i)
            for (long j = 0; j < b; ++j)
                (*out)[static_cast<std::size_t>((bi * b + i) * n + bj * b + j)] =
                    st.d[static_cast<std::size_t>(i * b + j)];
        st.grid.clear();
        self->quit();
    };
    return {[=](grid_atom, const std::vector<caf::actor>& grid) {
                self->state.grid = grid;
                start_step();
                try_steps();
            },
            [=](block_atom, long k, bool from_column, const std::vector<long>&) {
                auto& in = self->state.inputs[k];
                (from_column ? in.first : in.second) =
                    self->current_mailbox_element()->copy_content_to_message();
                if (!self->state.grid.empty()) try_steps();  // else: before our grid message
            }};
}

SAVINA_BENCH(apsp) {
    const long n = info.size("n", 512, 128);
    const long b = info.size("block", 64, 32);
    savina::lcg rng{11};
    std::vector<long> w(static_cast<std::size_t>(n * n));
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j)
            w[static_cast<std::size_t>(i * n + j)] = i == j ? 0 : rng.below(1000) + 1;
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::vector<long> result(static_cast<std::size_t>(n * n));
    bench::stopwatch t;
    {
        const long nb = n / b;
        std::vector<caf::actor> grid;
        for (long bi = 0; bi < nb; ++bi)
            for (long bj = 0; bj < nb; ++bj) {
                std::vector<long> d(static_cast<std::size_t>(b * b));
                for (long i = 0; i < b; ++i)
                    for (long j = 0; j < b; ++j)
                        d[static_cast<std::size_t>(i * b + j)] =
                            w[static_cast<std::size_t>((bi * b + i) * n + bj * b + j)];
                grid.push_back(system.spawn(block_actor, n, b, bi, bj, std::move(d), &result));
            }
        for (auto& a : grid) caf::anon_send(a, grid_atom::value, grid);
    }
    system.await_all_actors_done();
    const double s = t.seconds();
    std::uint64_t h = 0;
    for (long bi = 0; bi < n / b; ++bi)
        for (long bj = 0; bj < n / b; ++bj)
            for (long i = 0; i < b; ++i)
                for (long j = 0; j < b; ++j)
                    h = savina::mix(
                        h, static_cast<std::uint64_t>(
                               result[static_cast<std::size_t>((bi * b + i) * n + bj * b + j)]));
    return {s, h};
}

}  // namespace savina_apsp
