#!/usr/bin/env bash
# Core benchmarks, called by bench/run (see bench/README.md for the contract).
# Env: BUILD (absolute build dir), QUICK (0|1), RUNS (runs per program).
# Prints only RESULT lines on stdout; notes go to stderr. Each round runs
# every benchmark's troupe program and then its peer twins, so troupe and
# peer measurements alternate RUNS times.
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
bench_setup core

if [ "$QUICK" = 1 ]; then
    create_iters=100000; std_create_iters=2000; rounds=200000
    lock_iters=2000000;  contend_ms=200;        idle_ms=1000
else
    create_iters=1000000; std_create_iters=10000; rounds=2000000
    lock_iters=20000000;  contend_ms=1000;        idle_ms=5000
fi

# run PROGRAM ARGS...: bench_run on $bin/PROGRAM (a missing twin is
# skipped with a note, a missing troupe program fails; see bench/lib.sh).
run() { bench_run "$bin/$1" "${@:2}"; }

# shellcheck source=run_forkjoin.sh
source "$(dirname "$0")/run_forkjoin.sh"

for ((r = 1; r <= RUNS; r++)); do
    echo "core: round $r of $RUNS" >&2
    run core_thread_create_join --iters=$create_iters
    run core_boost_fiber_thread_create_join --iters=$create_iters
    run core_std_thread_create_join --iters=$std_create_iters

    run core_sem_pingpong --rounds=$rounds
    # unbuffered_channel is Boost.Fiber's cheapest primitive for this on
    # this machine (a mutex+condition_variable semaphore costs ~1.7x more);
    # `--prim=condvar` measures the other.
    run core_boost_fiber_sem_pingpong --rounds=$rounds --prim=channel

    run core_lock_uncontended --iters=$lock_iters --ctx=os
    run core_lock_uncontended --iters=$lock_iters --ctx=user
    run core_std_lock_uncontended --iters=$lock_iters

    # Each prints ns_per_op and the wait percentiles (wait_p50_ns,
    # wait_p99_ns, wait_max_ns) of every acquisition; the std twin is the
    # peer of the OS-thread rows, the Boost.Fiber twin of the user-thread ones.
    run core_lock_contended --ms=$contend_ms --ctx=os
    run core_lock_contended --ms=$contend_ms --ctx=user
    run core_std_lock_contended --ms=$contend_ms
    run core_boost_fiber_lock_contended --ms=$contend_ms
    run core_lock_contended --ms=$contend_ms --ctx=os --lock=barging
    run core_lock_contended --ms=$contend_ms --ctx=user --lock=barging
    run core_std_lock_contended --ms=$contend_ms --bench=lock_contended_barging
    run core_boost_fiber_lock_contended --ms=$contend_ms --bench=lock_contended_barging

    run core_sem_uncontended --iters=$lock_iters --ctx=os
    run core_sem_uncontended --iters=$lock_iters --ctx=user
    run core_std_sem_uncontended --iters=$lock_iters

    for op in get available; do
        run core_future_ready --iters=$lock_iters --op=$op --ctx=os
        run core_future_ready --iters=$lock_iters --op=$op --ctx=user
        run core_std_future_ready --iters=$lock_iters --op=$op
    done

    run core_idle_cpu --ms=$idle_ms --threads=1000 --processors=4

    fork_join_round
done
# The everyday kit: wait_group, latch, barrier (bench/core/kit.sh).
source "$(dirname "$0")/kit.sh"
exit $bench_status
