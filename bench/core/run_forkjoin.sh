#!/usr/bin/env bash
# The fork-join rows of the core benchmarks (troupe/parallel.hpp beside
# TBB, OpenMP and Go, at 1 and 2 processors). Sourced by bench/core/run.sh
# once per round; also runnable alone with the same environment (BUILD,
# QUICK, RUNS), e.g.
#   BUILD=$PWD/build/bench RUNS=5 bash bench/core/run_forkjoin.sh
# Prints only RESULT lines on stdout.
if [ -z "${bench_module:-}" ]; then
    set -uo pipefail
    # shellcheck source=../lib.sh
    source "$(dirname "$0")/../lib.sh"
    bench_setup core
    fj_standalone=1
fi

if [ "$QUICK" = 1 ]; then fib_n=24; loop_n=100000; else fib_n=30; loop_n=1000000; fi
[ -n "${gobin:-}" ] || bench_go_twins fork_join_fib parallel_for

fork_join_round() {
    local p
    for p in 1 2; do
        bench_run "$bin/core_fork_join_fib" --n=$fib_n --processors=$p
        bench_run "$bin/core_tbb_fork_join_fib" --n=$fib_n --processors=$p
        bench_run "$bin/core_openmp_fork_join_fib" --n=$fib_n --processors=$p
        # Go takes about 10x longer per fib: one timed repetition.
        bench_run "$gobin/fork_join_fib" --n=$fib_n --processors=$p --reps=1
        bench_run "$bin/core_parallel_for" --n=$loop_n --processors=$p
        bench_run "$bin/core_tbb_parallel_for" --n=$loop_n --processors=$p
        bench_run "$bin/core_openmp_parallel_for" --n=$loop_n --processors=$p
        bench_run "$gobin/parallel_for" --n=$loop_n --processors=$p
    done
}

if [ -n "${fj_standalone:-}" ]; then
    for ((r = 1; r <= RUNS; r++)); do
        echo "fork-join: round $r of $RUNS" >&2
        fork_join_round
    done
    exit $bench_status
fi
