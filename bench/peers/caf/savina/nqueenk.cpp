// CAF 0.17 twin of bench/savina/nqueenk.cpp: a master deals partial boards
// to W workers round robin; shallow boards are extended and sent back,
// deep ones solved sequentially. Boards travel packed in a uint64_t
// (4 bits a row): a std::array is not a CAF 0.17 message type.
namespace savina_nqueenk {

using work_atom = caf::atom_constant<caf::atom("work")>;
using result_atom = caf::atom_constant<caf::atom("result")>;

constexpr int max_n = 16;
using board = std::array<signed char, max_n>;

inline board unpack(std::uint64_t p, int depth) {
    board b{};
    for (int r = 0; r < depth; ++r)
        b[static_cast<std::size_t>(r)] = static_cast<signed char>((p >> (4 * r)) & 15);
    return b;
}

inline bool safe(const board& b, int depth, int col) {
    for (int r = 0; r < depth; ++r) {
        const int c = b[static_cast<std::size_t>(r)];
        if (c == col || c - col == depth - r || col - c == depth - r) return false;
    }
    return true;
}

inline long solve(board& b, int depth, int n) {
    if (depth == n) return 1;
    long count = 0;
    for (int col = 0; col < n; ++col)
        if (safe(b, depth, col)) {
            b[static_cast<std::size_t>(depth)] = static_cast<signed char>(col);
            count += solve(b, depth + 1, n);
        }
    return count;
}

caf::behavior worker(caf::event_based_actor* self, caf::actor boss, int n, int threshold) {
    return {[=](work_atom, std::uint64_t packed, int depth) {
                board b = unpack(packed, depth);
                if (depth >= threshold) {
                    self->send(boss, result_atom::value, solve(b, depth, n));
                    return;
                }
                for (int col = 0; col < n; ++col)
                    if (safe(b, depth, col))
                        self->send(boss, work_atom::value,
                                   packed | (static_cast<std::uint64_t>(col) << (4 * depth)),
                                   depth + 1);
                self->send(boss, result_atom::value, 0L);
            },
            [=](savina::stop_atom) { self->quit(); }};
}

struct master_state {
    std::vector<caf::actor> workers;
    long outstanding = 0, solutions = 0;
    std::size_t next_worker = 0;
};

caf::behavior master(caf::stateful_actor<master_state>* self, int n, int threshold, long n_workers,
                     long* out) {
    for (long i = 0; i < n_workers; ++i)
        self->state.workers.push_back(
            self->spawn(worker, caf::actor_cast<caf::actor>(self), n, threshold));
    return {[=](work_atom, std::uint64_t packed, int depth) {
                auto& st = self->state;
                ++st.outstanding;
                self->send(st.workers[st.next_worker], work_atom::value, packed, depth);
                st.next_worker = (st.next_worker + 1) % st.workers.size();
            },
            [=](result_atom, long s) {
                auto& st = self->state;
                st.solutions += s;
                if (--st.outstanding > 0) return;
                *out = st.solutions;
                for (auto& w : st.workers) self->send(w, savina::stop_atom::value);
                st.workers.clear();
                self->quit();
            }};
}

SAVINA_BENCH(nqueenk) {
    const int n = static_cast<int>(info.size("n", 12, 9));
    const int threshold = static_cast<int>(info.size("threshold", 4, 3));
    const long n_workers = info.size("workers_n", 20, 20);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    long solutions = 0;
    bench::stopwatch t;
    caf::anon_send(system.spawn(master, n, threshold, n_workers, &solutions), work_atom::value,
                   std::uint64_t{0}, 0);
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(solutions)};
}

}  // namespace savina_nqueenk
