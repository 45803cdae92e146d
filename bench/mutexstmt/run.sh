#!/usr/bin/env bash
# mutexstmt benchmarks, called by bench/run (see bench/README.md for the
# contract). Env: BUILD (absolute build dir), QUICK (0|1), RUNS (runs per
# program). Prints only RESULT lines on stdout; notes go to stderr.
#
# bench=mutex_stmt: T OS threads acquire the same N spin locks in random
# orders for a fixed time (bench/mutexstmt/mutex_stmt_bench.hpp), for
# N = 2, 4, 8 and T = 1, 2, 4 and 8 (4 and 8 oversubscribe this 2-core
# machine: the rows where std::scoped_lock's back-off shows).
# Each round runs troupe's scope, then std::scoped_lock, then the fixed-order
# baseline, for every (N, T): the three alternate RUNS times. Every run is
# bounded by time, also when std::scoped_lock stalls (it then reports the
# count it reached; see the program's note on stderr). A run in which one
# thread got almost nothing prints the per-thread counts on stderr.
#
# bench=mutex_stmt_cost: ns of CPU time per acquisition of N = 2, 4, 6, 7, 8
# locks by one thread, the minimum of several batches: the cost of each
# variant's acquisition itself, insensitive to other load on the machine.
set -uo pipefail
bench_timeout=120
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
bench_setup mutexstmt

if [ "$QUICK" = 1 ]; then
    ms=150; cost_batches=5
else
    ms=${MUTEX_STMT_MS:-2000}; cost_batches=30
fi

# run PROGRAM ARGS...: bench_run on $bin/PROGRAM (see bench/lib.sh).
run() { bench_run "$bin/$1" "${@:2}"; }

for ((r = 1; r <= RUNS; r++)); do
    echo "mutexstmt: round $r of $RUNS (${ms} ms per run)" >&2
    for threads in 1 2 4 8; do
        for locks in 2 4 8; do
            run mutexstmt_mutex_stmt --locks=$locks --threads=$threads --ms=$ms
            run mutexstmt_std_mutex_stmt --locks=$locks --threads=$threads --ms=$ms
            run mutexstmt_baseline_mutex_stmt --locks=$locks --threads=$threads --ms=$ms
        done
    done
    for locks in 2 4 6 7 8; do
        run mutexstmt_mutex_stmt --locks=$locks --cost=$cost_batches
        run mutexstmt_std_mutex_stmt --locks=$locks --cost=$cost_batches
        run mutexstmt_baseline_mutex_stmt --locks=$locks --cost=$cost_batches
    done
done
exit $bench_status
