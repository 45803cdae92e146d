#!/usr/bin/env bash
# A/B of the actor executor's worker kinds (docs/scheduler.md, "Actor
# workers as user threads"): the same release binaries, alternating, with
#   K  = kernel-thread workers (the default), --workers=P
#   U1 = user-thread workers, 1 per processor: TROUPE_ACTOR_WORKERS=user_threads, --workers=P
#   U2 = user-thread workers, 2 per processor: TROUPE_ACTOR_WORKERS=user_threads:2, --workers=2P
# so every variant runs behaviours on P kernel threads. Each program runs
# under bench/timed (CPU and wall time). Prints RESULT lines with
# mode=<K|U1|U2> procs=<P>, then a table of medians (bench/actors/ab_summary.py).
#
#   BUILD=$PWD/build/release RUNS=5 nice -n 19 bench/actors/ab_worker_threads.sh [PROGRAM...]
#
# PROGRAM: static dynamic executor repeat matrix ask (default: all).
# QUICK=1 shrinks sizes (never quote those).
set -euo pipefail
BUILD=${BUILD:?BUILD must name the release build directory}
RUNS=${RUNS:-5}
PROCS=${PROCS:-"1 2"}
here=$(cd "$(dirname "$0")" && pwd)
dir="$BUILD/bench/actors"
timed="$here/../timed"
if [ "${QUICK:-0}" = 1 ]; then
  static=(--n=20000000) dynamic=(--n=5000000) exec=(--actors=8000 --set=100 --rounds=4)
  repeat=(--servers=20000 --rounds=1) matrix=(--n=384) ask=(--asks=500)
else
  static=(--n=100000000) dynamic=(--n=20000000) exec=(--actors=40000 --set=100 --rounds=10)
  repeat=(--servers=100000 --rounds=1) matrix=(--n=${MATRIX_N:-1024}) ask=(--asks=2000)
fi
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(static dynamic executor repeat matrix ask)

one() {  # one MODE P PROGRAM ARGS...
  local mode=$1 p=$2 prog=$3 w env=()
  shift 3
  case $mode in
    K) w=$p env=(TROUPE_ACTOR_WORKERS=kernel_threads) ;;
    U1) w=$p env=(TROUPE_ACTOR_WORKERS=user_threads) ;;
    U2) w=$((2 * p)) env=(TROUPE_ACTOR_WORKERS=user_threads:2) ;;
  esac
  env "${env[@]}" timeout 600 "$timed" "$dir/$prog" "$@" --workers="$w" | grep '^RESULT ' |
    sed "s/\$/ mode=$mode procs=$p/" || echo "ab: $prog $mode P=$p failed" >&2
}

for name in "${progs[@]}"; do
  case $name in
    static) prog=actors_static_send args=("${static[@]}") ;;
    dynamic) prog=actors_dynamic_send args=("${dynamic[@]}") ;;
    executor) prog=actors_executor args=("${exec[@]}") ;;
    repeat) prog=actors_repeat args=("${repeat[@]}") ;;
    matrix) prog=actors_matrix args=("${matrix[@]}") ;;
    ask) prog=actors_ask_threads args=("${ask[@]}") ;;
    *) echo "ab: unknown program $name" >&2; exit 2 ;;
  esac
  for p in $PROCS; do
    for ((r = 0; r < RUNS; r++)); do
      # Rotate the order so no mode always runs first.
      case $((r % 3)) in
        0) order=(K U1 U2) ;;
        1) order=(U1 U2 K) ;;
        2) order=(U2 K U1) ;;
      esac
      for m in "${order[@]}"; do one "$m" "$p" "$prog" "${args[@]}"; done
    done
  done
done
