#!/usr/bin/env bash
# Remote-actor benchmarks: troupe-remote against raw MPI (the transport's
# limit) and CAF 0.17 remote actors over loopback, alternating, RUNS times
# each. Called by bench/run with BUILD=<absolute build dir>, QUICK=0|1,
# RUNS=<n>; prints only RESULT lines on stdout. troupe and MPI programs run
# as `mpirun -np 2`; the CAF twins fork their second process themselves.
set -euo pipefail
BUILD=${BUILD:?BUILD must name the build directory}
QUICK=${QUICK:-0}
RUNS=${RUNS:-3}
dir="$BUILD/bench/remote"
[ -x "$dir/remote_ping_pong" ] || { echo "remote benchmarks not built in $dir (MPI missing?)" >&2; exit 1; }
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2)

if [ "$QUICK" = 1 ]; then
  pp=3000 tp=200000 idle_ms=1000
else
  pp=100000 tp=2000000 idle_ms=5000
fi

failed=0
run() {  # run [mpi] PROGRAM ARGS...: RESULT lines through; a missing twin is skipped
  local pre=()
  if [ "$1" = mpi ]; then pre=("${mpirun[@]}"); shift; fi
  local p="$dir/$1"; shift
  [ -x "$p" ] || return 0
  if ! timeout 600 "${pre[@]}" "$p" "$@" | grep '^RESULT '; then
    echo "remote: $(basename "$p") $* failed" >&2
    failed=1
  fi
}
[ -x "$dir/remote_caf_ping_pong" ] || echo "remote: CAF twins not built (install libcaf-dev); troupe and MPI only" >&2

for ((r = 0; r < RUNS; r++)); do
  run mpi remote_ping_pong --n=$pp
  run mpi remote_mpi_ping_pong --n=$pp
  run remote_caf_ping_pong --n=$pp
done
for s in 1 4; do
  for ((r = 0; r < RUNS; r++)); do
    run mpi remote_throughput --n=$tp --senders=$s
    run mpi remote_mpi_throughput --n=$tp --senders=$s
    run remote_caf_throughput --n=$tp --senders=$s
  done
done
run mpi remote_idle --ms=$idle_ms
exit $failed
