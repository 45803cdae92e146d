#!/usr/bin/env bash
# The Savina benchmarks: troupe (`savina`) and its CAF 0.17 twin
# (`caf_savina`), alternating, RUNS times each, at 1 and 2 workers. Called
# by bench/run with BUILD=<absolute build dir>, QUICK=0|1, RUNS=<n>; prints
# only RESULT lines (seconds, max_rss_kb, and bench/timed's cpu/wall). Each
# program also prints its result (metric=check); this script compares the
# CAF run's result with the troupe run's just before it and prints
# metric=check_mismatch (0 = same) as a correctness check instead.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
bench_setup savina 5
[ -x "$bin/savina" ] || { echo "savina benchmarks not built in $bin" >&2; exit 1; }
[ -x "$bin/caf_savina" ] || echo "savina: CAF twins not built (install libcaf-dev); troupe only" >&2

size=()
[ "$QUICK" = 1 ] && size=(--quick=1)
# SAVINA_BENCHES (blank-separated names) picks a subset; default: all.
read -r -a benches <<<"${SAVINA_BENCHES:-$("$bin/savina" --bench=list | tr '\n' ' ')}"

for b in "${benches[@]}"; do
  for w in 1 2; do
    for ((r = 0; r < RUNS; r++)); do
      t=$(bench_run "$bin/savina" --bench="$b" --workers=$w "${size[@]}")
      c=$(bench_run "$bin/caf_savina" --bench="$b" --workers=$w "${size[@]}")
      printf '%s\n' "$t" "$c" | grep -v ' metric=check ' | grep '^RESULT ' || true
      tv=$(printf '%s\n' "$t" | sed -n 's/.* metric=check value=\([0-9]*\).*/\1/p')
      cv=$(printf '%s\n' "$c" | sed -n 's/.* metric=check value=\([0-9]*\).*/\1/p')
      if [ -n "$cv" ]; then
        echo "RESULT bench=savina_$b system=caf metric=check_mismatch value=$([ "$tv" = "$cv" ] && echo 0 || echo 1) workers=$w"
      fi
    done
  done
done
exit $bench_status
