#!/usr/bin/env bash
# A/B of the execution trace's cost (docs/trace.md): the same benchmark
# programs from two release builds, alternating, in three modes:
#   off   = hooks built in (the default build), TROUPE_TRACE unset
#   none  = hooks compiled out (a build configured with -Dtrace=false)
#   on    = hooks built in, TROUPE_TRACE=<tmp file> (recording; the file is
#           written at exit, outside the timed window)
# Prints RESULT lines with mode=<off|none|on>, then a table of medians and
# paired ratios (bench/core/trace_ab_summary.py).
#
#   BUILD=$PWD/build/release NOTRACE=$PWD/build-notrace/release RUNS=9 \
#     nice -n 19 bench/core/trace_ab.sh
#
# Make the second build with
#   BUILD_ROOT=build-notrace TARGETS="bench/channels/channels_chan_contend \
#     bench/actors/actors_dynamic_send" bash scripts/build.sh release -Dtrace=false
# QUICK=1 shrinks sizes (never quote those); CONTEND_MS and DYNAMIC_N set
# the chan_contend window and the actor_dynamic_send length.
set -euo pipefail
BUILD=${BUILD:?BUILD must name the release build directory (trace hooks built in)}
NOTRACE=${NOTRACE:?NOTRACE must name a release build directory configured with -Dtrace=false}
RUNS=${RUNS:-9}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "${QUICK:-0}" = 1 ]; then
  contend=(--producers=1 --consumers=1 --ms=300 --capacity=128 --processors=2)
  dynamic=(--n=2000000 --workers=2)
else
  contend=(--producers=1 --consumers=1 --ms=${CONTEND_MS:-2000} --capacity=128 --processors=2)
  dynamic=(--n=${DYNAMIC_N:-20000000} --workers=2)
fi

one() {  # one MODE PROGRAM ARGS...
  local mode=$1 prog=$2 dir=$BUILD env=(TROUPE_TRACE=)
  shift 2
  case $mode in
    none) dir=$NOTRACE ;;
    on) env=(TROUPE_TRACE="$tmp/trace.json") ;;
  esac
  env "${env[@]}" timeout 600 "$dir/$prog" "$@" | grep '^RESULT ' | sed "s/\$/ mode=$mode/" ||
    echo "trace_ab: $prog $mode failed" >&2
}

echo "trace_ab: $(uptime)" >&2
for ((r = 0; r < RUNS; r++)); do
  # Rotate the order so no mode always runs first.
  case $((r % 3)) in
    0) order=(off none on) ;;
    1) order=(none on off) ;;
    2) order=(on off none) ;;
  esac
  for m in "${order[@]}"; do one "$m" bench/channels/channels_chan_contend "${contend[@]}"; done
  for m in "${order[@]}"; do one "$m" bench/actors/actors_dynamic_send "${dynamic[@]}"; done
  echo "trace_ab: round $((r + 1)) of $RUNS, $(uptime)" >&2
done
