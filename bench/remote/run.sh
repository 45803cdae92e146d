#!/usr/bin/env bash
# Remote-actor benchmarks: troupe-remote against raw MPI (the transport's
# limit) and CAF 0.17 remote actors over loopback, alternating, RUNS times
# each. Called by bench/run with BUILD=<absolute build dir>, QUICK=0|1,
# RUNS=<n>; prints only RESULT lines on stdout. troupe and MPI programs run
# as `mpirun -np 2`; the CAF twins fork their second process themselves.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
bench_setup remote 3
[ -x "$bin/remote_ping_pong" ] || { echo "remote benchmarks not built in $bin (MPI missing?)" >&2; exit 1; }
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2)

if [ "$QUICK" = 1 ]; then
  pp=3000 tp=200000 idle_ms=1000
else
  pp=100000 tp=2000000 idle_ms=5000
fi

# run [mpi] PROGRAM ARGS...: bench_run on $bin/PROGRAM, under mpirun with
# `mpi` (a missing twin is skipped with a note, a missing troupe program
# fails; see bench/lib.sh).
run() {
  if [ "$1" = mpi ]; then bench_launch=("${mpirun[@]}"); shift; else bench_launch=(); fi
  bench_run "$bin/$1" "${@:2}"
  bench_launch=()
}
[ -x "$bin/remote_caf_ping_pong" ] || echo "remote: CAF twins not built (install libcaf-dev); troupe and MPI only" >&2

for ((r = 0; r < RUNS; r++)); do
  run mpi remote_ping_pong --n=$pp --binding=none
  run mpi remote_mpi_ping_pong --n=$pp --binding=none
  run remote_caf_ping_pong --n=$pp
done
# The same round trips under Open MPI's default binding (one core per rank,
# what a plain `mpirun -np 2` gives) and with 4 ranks on this machine's
# cores (two pairs at once, --oversubscribe): rows tagged binding=core and
# binding=shared, each beside raw MPI's under the same binding.
bound=(mpirun --allow-run-as-root -np 2)
shared=(mpirun --allow-run-as-root --oversubscribe -np 4)
for ((r = 0; r < RUNS; r++)); do
  for p in remote_ping_pong remote_mpi_ping_pong; do
    bench_launch=("${bound[@]}"); bench_run "$bin/$p" --n=$pp --binding=core; bench_launch=()
    bench_launch=("${shared[@]}"); bench_run "$bin/$p" --n=$((pp / 4)) --binding=shared; bench_launch=()
  done
done
for s in 1 4; do
  for ((r = 0; r < RUNS; r++)); do
    run mpi remote_throughput --n=$tp --senders=$s
    run mpi remote_mpi_throughput --n=$tp --senders=$s
    run remote_caf_throughput --n=$tp --senders=$s
  done
done
run mpi remote_idle --ms=$idle_ms
exit $bench_status
