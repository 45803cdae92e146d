// Savina "N-Queens (first K solutions)", here counting all solutions so the
// result is fixed: a master deals partial boards to W worker actors round
// robin; a worker extends a board by one queen in every safe column and
// sends each extension back to the master while it is shallower than the
// threshold depth, else solves it sequentially and reports its count. The
// master stops the workers when no board is outstanding. Boards are value
// sends (each message owns its board). Check: the number of solutions.
#include <array>
#include <vector>

#include "savina.hpp"

namespace savina_nqueenk {

constexpr int max_n = 16;
using board = std::array<signed char, max_n>;

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

struct master;
struct work : troupe::message {
    board b;
    int depth;
    work(const board& bb, int d) : b(bb), depth(d) {}
};
struct result : troupe::message {
    long solutions;
    explicit result(long s) : solutions(s) {}
};

struct worker : troupe::actor {
    master* boss = nullptr;
    int n = 0, threshold = 0;
    troupe::allocation receive(work& w);
};

struct master : troupe::actor {
    std::vector<worker>* workers = nullptr;
    long outstanding = 0, solutions = 0;
    std::size_t next_worker = 0;
    void deal(const board& b, int depth) {
        ++outstanding;
        troupe::send<work>((*workers)[next_worker], b, depth);
        next_worker = (next_worker + 1) % workers->size();
    }
    troupe::allocation receive(work& w) {  // a board to deal (from a worker)
        deal(w.b, w.depth);
        return troupe::Nodelete;
    }
    troupe::allocation receive(result& r) {
        solutions += r.solutions;
        if (--outstanding > 0) return troupe::Nodelete;
        for (auto& wk : *workers) wk | troupe::finished_msg;
        return troupe::Finished;
    }
};

troupe::allocation worker::receive(work& w) {
    if (w.depth >= threshold) {
        troupe::send<result>(*boss, solve(w.b, w.depth, n));
        return troupe::Nodelete;
    }
    for (int col = 0; col < n; ++col)
        if (safe(w.b, w.depth, col)) {
            board b = w.b;
            b[static_cast<std::size_t>(w.depth)] = static_cast<signed char>(col);
            troupe::send<work>(*boss, b, w.depth + 1);
        }
    troupe::send<result>(*boss, 0L);  // this board is done
    return troupe::Nodelete;
}

SAVINA_BENCH(nqueenk) {
    const int n = static_cast<int>(info.size("n", 12, 9));
    const int threshold = static_cast<int>(info.size("threshold", 4, 3));
    const long n_workers = info.size("workers_n", 20, 20);
    troupe::actor_system sys{savina::config(info)};
    bench::stopwatch t;
    master boss;
    std::vector<worker> workers(static_cast<std::size_t>(n_workers));
    for (auto& w : workers) {
        w.boss = &boss;
        w.n = n;
        w.threshold = threshold;
    }
    boss.workers = &workers;
    troupe::send<work>(boss, board{}, 0);
    sys.stop();
    return {t.seconds(), static_cast<std::uint64_t>(boss.solutions)};
}

}  // namespace savina_nqueenk
