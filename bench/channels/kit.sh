#!/usr/bin/env bash
# Timer channels (after, ticker) beside Go's time.NewTimer / NewTicker:
# creation rate and heap bytes per pending timer. Sourced by
# bench/channels/run.sh after its own rounds; also runnable alone with the
# same environment (BUILD, QUICK, RUNS; see bench/README.md):
#   BUILD=$PWD/build/bench bash bench/channels/kit.sh > timers.raw
if [ -z "${bench_module:-}" ]; then
    set -uo pipefail
    # shellcheck source=../lib.sh
    source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
    bench_setup channels
    kit_alone=1
fi
if [ "$QUICK" = 1 ]; then
    kit_iters=200000; kit_count=100000
else
    kit_iters=2000000; kit_count=1000000
fi
bench_go_twins timers
for ((kr = 1; kr <= RUNS; kr++)); do
    echo "channels (timers): round $kr of $RUNS" >&2
    for k in timer ticker; do
        bench_run "$bin/channels_timers" --mode=create --kind=$k --iters=$kit_iters
        bench_run "$gobin/timers" --mode=create --kind=$k --iters=$kit_iters
    done
    bench_run "$bin/channels_timers" --mode=pending --count=$kit_count
    bench_run "$gobin/timers" --mode=pending --count=$kit_count
done
if [ -n "${kit_alone:-}" ]; then exit $bench_status; fi
