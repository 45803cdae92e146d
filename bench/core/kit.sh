#!/usr/bin/env bash
# The everyday kit's core rows (wait_group, latch, barrier) beside Go's
# sync.WaitGroup, std::latch/std::barrier and Boost.Fiber's barrier.
# Sourced by bench/core/run.sh after its own rounds; also runnable alone
# with the same environment (BUILD, QUICK, RUNS; see bench/README.md):
#   BUILD=$PWD/build/bench bash bench/core/kit.sh > kit.raw
# Prints only RESULT lines on stdout, troupe and peers alternating.
if [ -z "${bench_module:-}" ]; then
    set -uo pipefail
    # shellcheck source=../lib.sh
    source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
    bench_setup core
    kit_alone=1
fi
if [ "$QUICK" = 1 ]; then
    kit_iters=1000000; kit_contended=200000; kit_wake=20000; kit_phases=20000; kit_std_phases=200
else
    kit_iters=10000000; kit_contended=2000000; kit_wake=100000; kit_phases=100000
    kit_std_phases=1000
fi
bench_go_twins wait_group
kit() { bench_run "$bin/$1" "${@:2}"; }

for ((kr = 1; kr <= RUNS; kr++)); do
    echo "core (kit): round $kr of $RUNS" >&2
    kit core_wait_group --mode=uncontended --iters=$kit_iters --ctx=os
    kit core_wait_group --mode=uncontended --iters=$kit_iters --ctx=user
    bench_run "$gobin/wait_group" --mode=uncontended --iters=$kit_iters
    for p in 1 2; do
        kit core_wait_group --mode=contended --iters=$kit_contended --threads=4 --processors=$p
        bench_run "$gobin/wait_group" --mode=contended --iters=$kit_contended --threads=4 --processors=$p
        kit core_wait_group --mode=wake --iters=$kit_wake --threads=4 --processors=$p
        bench_run "$gobin/wait_group" --mode=wake --iters=$kit_wake --threads=4 --processors=$p
    done

    kit core_barrier --prim=latch_uncontended --iters=$kit_iters --ctx=os
    kit core_barrier --prim=latch_uncontended --iters=$kit_iters --ctx=user
    kit core_std_barrier --prim=latch_uncontended --iters=$kit_iters
    for p in 1 2; do
        for t in 2 4; do
            for prim in barrier latch; do
                kit core_barrier --prim=$prim --iters=$kit_phases --threads=$t --processors=$p
                # std: OS threads on the whole machine (processors is a label);
                # a phase costs futex sleeps and wakes (0.1-15 ms on a loaded
                # machine), so fewer phases (ns per phase is what is compared)
                kit core_std_barrier --prim=$prim --iters=$kit_std_phases --threads=$t \
                    --processors=$p
            done
            kit core_boost_fiber_barrier --prim=barrier --iters=$kit_phases --threads=$t \
                --processors=$p
        done
    done
done
if [ -n "${kit_alone:-}" ]; then exit $bench_status; fi
