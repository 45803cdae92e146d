#!/usr/bin/env bash
# Actor benchmarks: troupe and its CAF 0.17 twins, alternating, RUNS times
# each. Called by bench/run with BUILD=<absolute build dir>, QUICK=0|1,
# RUNS=<n>; prints only RESULT lines on stdout (bench/README.md,
# "RESULT lines"). CAF twins are skipped when they were not built (no libcaf-dev).
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
bench_setup actors 3
[ -x "$bin/actors_static_send" ] || { echo "actors benchmarks not built in $bin" >&2; exit 1; }

if [ "$QUICK" = 1 ]; then
  workers=(1 2)
  static_t=20000000 static_c=1000000
  dynamic_t=5000000 dynamic_c=200000
  exec_args=(--actors=8000 --set=100 --rounds=4)
  repeat_args=(--servers=20000 --rounds=1)
  matrix_args=(--n=384)
  balance_args=(--groups=40 --rounds=5)
  balance_workers=(2)
  ask_args=(--asks=500)
  timer_args=(--n=100000)
  churn_args=(--n=100000)
else
  workers=(1 2 4)
  static_t=100000000 static_c=10000000
  dynamic_t=20000000 dynamic_c=2000000
  exec_args=(--actors=40000 --set=100 --rounds=10)
  repeat_args=(--servers=100000 --rounds=1)
  matrix_args=(--n=1024)
  balance_args=(--groups=80 --rounds=10)
  balance_workers=(2 4)
  ask_args=(--asks=2000)
  timer_args=(--n=1000000)
  churn_args=(--n=1000000)
fi

# run PROGRAM ARGS...: bench_run on $bin/PROGRAM (a missing CAF twin is
# skipped with a note, a missing troupe program fails; see bench/lib.sh).
run() { bench_run "$bin/$1" "${@:2}"; }
[ -x "$bin/caf_executor" ] || echo "actors: CAF twins not built (install libcaf-dev); troupe only" >&2

# alternate NAME 'TROUPE ARGS' 'CAF ARGS': for each worker count w, RUNS
# rounds of actors_NAME then caf_NAME, each with its args and --workers=w
# (args are split on blanks).
alternate() {
  local w r
  for w in "${workers[@]}"; do
    for ((r = 0; r < RUNS; r++)); do
      # shellcheck disable=SC2086
      run actors_$1 $2 --workers=$w
      # shellcheck disable=SC2086
      run caf_$1 $3 --workers=$w
    done
  done
}

alternate static_send "--n=$static_t" "--n=$static_c"
alternate dynamic_send "--n=$dynamic_t" "--n=$dynamic_c"
alternate executor "${exec_args[*]} --rss=1" "${exec_args[*]} --rss=1"
for w in "${workers[@]}"; do
  for ((r = 0; r < RUNS; r++)); do
    run actors_repeat "${repeat_args[@]}" --workers=$w
    run caf_repeat "${repeat_args[@]}" --workers=$w
    # CAF 0.17's work stealing walks the victim's whole queue while holding
    # its locks, so with ~100k ready actors 2 threads are ~100x slower per
    # message than 1: a real result, reported; its `sharing` scheduler
    # policy gives the fair second number.
    [ "$w" -gt 1 ] && run caf_repeat "${repeat_args[@]}" --workers=$w --policy=sharing
  done
done
alternate matrix "${matrix_args[*]}" "${matrix_args[*]}"
# Asks to one account actor from 4 plain OS threads (4 x asks requests).
alternate ask_threads "${ask_args[*]}" "${ask_args[*]}"
# Actor timers beside CAF's delayed_send (schedule, memory per pending
# timer, cancel, churn, the random walk's floor, fire rate) and monitor
# churn (spawn, monitor, finish).
for ((r = 0; r < RUNS; r++)); do
  run actors_timers "${timer_args[@]}" --workers=1
  run caf_timers "${timer_args[@]}" --workers=1
  run actors_monitor_churn "${churn_args[@]}" --workers=1
  run caf_monitor_churn "${churn_args[@]}" --workers=1
done
for w in "${balance_workers[@]}"; do
  for mode in one multi; do
    for ((r = 0; r < RUNS; r++)); do
      for steal in none random longest locality; do
        run actors_balance --mode=$mode --steal=$steal --workers=$w "${balance_args[@]}"
      done
    done
  done
done
exit $bench_status
