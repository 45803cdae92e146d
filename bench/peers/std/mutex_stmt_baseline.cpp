// bench=mutex_stmt, system=baseline: the thesis baseline for
// bench/mutexstmt/mutex_stmt.cpp. Every thread locks the N spin locks in one
// fixed global order (index order), ignoring its random order, and releases
// them in reverse: the cost of the locks alone, with no deadlock avoidance.
// Same threads, locks and timer (bench/mutexstmt/mutex_stmt_bench.hpp).
#include "mutex_stmt_bench.hpp"

int main(int argc, char** argv) {
    return mutex_stmt_bench::run(
        argc, argv, "baseline",
        []<std::size_t N, class Lock>(std::integral_constant<std::size_t, N>, Lock* l,
                                      const std::uint32_t*) {
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                (l[I].lock(), ...);
                (l[N - 1 - I].unlock(), ...);
            }
            (std::make_index_sequence<N>{});
        });
}
