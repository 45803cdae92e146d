// bench=mutex_stmt, system=troupe: T threads each acquire the same N spin
// locks, named in random orders, with TROUPE_MUTEX (address order: a sorting
// network up to 8 locks, insertion sort beyond). See mutex_stmt_bench.hpp.
//
// Twins: bench/peers/std/mutex_stmt.cpp (std::scoped_lock) and
// bench/peers/std/mutex_stmt_baseline.cpp (one fixed order, no avoidance).
#include <troupe/mutex.hpp>

#include "mutex_stmt_bench.hpp"

int main(int argc, char** argv) {
    return mutex_stmt_bench::run(
        argc, argv, "troupe",
        []<std::size_t N, class Lock>(std::integral_constant<std::size_t, N>, Lock* l,
                                      const std::uint32_t* order) {
            [&]<std::size_t... I>(std::index_sequence<I...>){TROUPE_MUTEX(l[order[I]]...){}}(
                std::make_index_sequence<N>{});
        });
}
