#!/usr/bin/env bash
# Channel benchmarks, called by bench/run (see bench/README.md for the contract).
# Env: BUILD (absolute build dir), QUICK (0|1), RUNS (runs per program).
# Prints only RESULT lines on stdout; notes go to stderr. Each round runs
# every benchmark's troupe program and then its peer twins (Go, Boost.Fiber),
# so troupe and peer measurements alternate RUNS times.
#
# Benchmarks (names as in bench/RESULTS.md):
#   chan_contend         P producers + C consumers on one channel of 128 ints,
#                        1+1, 2+2, 4+4, processors = GOMAXPROCS = 2 (ops_per_s)
#   chan_rendezvous_rtt  capacity-0 ping-pong round trip, 1 and 2 processors
#                        (ns_per_op)
#   worker_pool          feeder -> 4 workers -> consumer (main OS thread, main
#                        lending its kernel thread, or a user thread), 2 M
#                        jobs, 2 processors (seconds)
#   chan_close_drain     close under load, values lost (troupe; must be 0)
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
bench_setup channels
procs=2

if [ "$QUICK" = 1 ]; then
    contend_ms=300; rtt_rounds=100000; drain_ms=200; pool_jobs=20000
else
    # The worker pool at 100,000 jobs ran 3-15 ms, and where the kernel put
    # its three busy threads decided the verdict; 2 M jobs run 0.1-0.5 s.
    contend_ms=2000; rtt_rounds=1000000; drain_ms=1000; pool_jobs=2000000
fi

# Go twins: built here into $BUILD/go (bench/lib.sh).
bench_go_twins chan_contend chan_rendezvous_rtt worker_pool

# run PROGRAM ARGS...: bench_run (a missing twin is skipped with a note, a
# missing troupe program fails; see bench/lib.sh).
run() { bench_run "$@"; }

for ((r = 1; r <= RUNS; r++)); do
    echo "channels: round $r of $RUNS" >&2
    for pc in "1 1" "2 2" "4 4"; do
        set -- $pc
        args=(--producers=$1 --consumers=$2 --ms=$contend_ms --capacity=128 --processors=$procs)
        run "$bin/channels_chan_contend" "${args[@]}"
        # Go's flag package takes the same --name=value form.
        run "$gobin/chan_contend" "${args[@]}"
        run "$bin/channels_boost_fiber_chan_contend" "${args[@]}"
        # Extra row (no troupe counterpart): every fiber launched from one
        # thread and placed by work_stealing, which keeps a 1+1 run on that
        # one thread (no cross-thread channel traffic at all).
        [ "$QUICK" = 1 ] || run "$bin/channels_boost_fiber_chan_contend" "${args[@]}" --spread=0
    done
    for p in 1 2; do
        run "$bin/channels_chan_rendezvous_rtt" --rounds=$rtt_rounds --processors=$p
        run "$gobin/chan_rendezvous_rtt" --rounds=$rtt_rounds --processors=$p
        # Boost.Fiber across two threads wakes a sleeping thread per message
        # (~10-30 us here): fewer rounds keep its run short; ns/op is per round.
        run "$bin/channels_boost_fiber_chan_rendezvous_rtt" --processors=$p \
            --rounds=$([ "$p" = 1 ] && echo $rtt_rounds || echo $((rtt_rounds / 20)))
    done
    for c in os os_lend user; do
        run "$bin/channels_worker_pool" --jobs=$pool_jobs --processors=$procs --consumer=$c
        run "$gobin/worker_pool" --jobs=$pool_jobs --processors=$procs --consumer=$c
    done
    run "$bin/channels_chan_close_drain" --producers=4 --consumers=4 --ms=$drain_ms \
        --capacity=128 --processors=$procs
done
# Timer channels (bench/channels/kit.sh).
source "$(dirname "$0")/kit.sh"
exit $bench_status
