// bench=mutex_stmt, system=std: twin of bench/mutexstmt/mutex_stmt.cpp with
// std::scoped_lock (libstdc++'s std::lock: lock one, try_lock the rest, on
// failure release all and start again from the lock that failed). Same
// threads, locks, orders and timer (bench/mutexstmt/mutex_stmt_bench.hpp).
#include <mutex>

#include "mutex_stmt_bench.hpp"

int main(int argc, char** argv) {
    return mutex_stmt_bench::run(
        argc, argv, "std",
        []<std::size_t N, class Lock>(std::integral_constant<std::size_t, N>, Lock* l,
                                      const std::uint32_t* order) {
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                std::scoped_lock held{l[order[I]]...};
            }
            (std::make_index_sequence<N>{});
        });
}
