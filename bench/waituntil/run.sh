#!/usr/bin/env bash
# waituntil benchmarks, called by bench/run (see bench/README.md for the
# contract). Env: BUILD (absolute build dir), QUICK (0|1), RUNS (runs per
# program). Prints only RESULT lines on stdout; notes go to stderr. Each
# round runs every configuration's troupe program and then its Go twin, so
# troupe and Go measurements alternate RUNS times.
#
# Benchmarks (names as in bench/RESULTS.md), all on 2 processors
# (GOMAXPROCS=2), channels of capacity 128:
#   select_contend  P+C threads selecting over K channels, blocking
#                   (k=2,4,8; 1+1 and 2+2) (ops_per_s); troupe also with
#                   mode=fair (a rotation per thread)
#   select_spin     the same with otherwise / Go `default` (ops_per_s)
#   select_order    the pathological case: P1/C1 select over A and B while
#                   P2/C2 use only B (ops_per_s)
#   select_futures  a server fulfils A, B, C; the client waits with
#                   predicate=or|and|andor|orand (ops_per_s = statements)
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
bench_setup waituntil
procs=2

if [ "$QUICK" = 1 ]; then ms=250; else ms=2000; fi

# Go twins: built here into $BUILD/go (bench/lib.sh).
bench_go_twins select_channels select_order select_futures

# run PROGRAM ARGS...: bench_run (a missing twin is skipped with a note, a
# missing troupe program fails; see bench/lib.sh).
run() { bench_run "$@"; }

for ((r = 1; r <= RUNS; r++)); do
    echo "waituntil: round $r of $RUNS" >&2
    for spin in 0 1; do
        for k in 2 4 8; do
            for pc in 1 2; do
                # Go's flag package takes the same --name=value form.
                args=(--k=$k --producers=$pc --consumers=$pc --spin=$spin --ms=$ms
                      --capacity=128 --processors=$procs)
                run "$bin/waituntil_select_channels" "${args[@]}"
                run "$gobin/select_channels" "${args[@]}"
                # troupe's fair mode (rotating start), Go's select-like
                # spreading over the channels; no Go counterpart.
                [ "$spin" = 0 ] && run "$bin/waituntil_select_channels" "${args[@]}" --fair=1
            done
        done
    done
    run "$bin/waituntil_select_order" --ms=$ms --capacity=128 --processors=$procs
    run "$gobin/select_order" --ms=$ms --capacity=128 --processors=$procs
    for p in or and andor orand; do
        run "$bin/waituntil_select_futures" --predicate=$p --ms=$ms --processors=$procs
        run "$gobin/select_futures" --predicate=$p --ms=$ms --processors=$procs
    done
done
exit $bench_status
