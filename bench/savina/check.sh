#!/usr/bin/env bash
# CI check of the Savina suite (meson test suite 'savina'): runs every
# benchmark at --quick size with 1 and 2 workers on troupe and on its CAF
# twin, and fails unless both print the same result (metric=check). Not
# timed: the numbers come from bench/run savina.
#   check.sh TROUPE_PROGRAM [CAF_PROGRAM]
# Without CAF_PROGRAM (CAF not installed at configure time) troupe's side
# still runs, and the test reports SKIP (77): nothing was compared.
set -uo pipefail
troupe=$1 caf=${2:-}
status=0
check_of() {  # check_of PROGRAM ARGS...: the program's check value, or FAIL
  local out
  if ! out=$(timeout 120 "$@" 2>&1); then
    printf '%s\n' "$out" >&2
    echo FAIL
    return
  fi
  printf '%s\n' "$out" | sed -n 's/^RESULT .* metric=check value=\([0-9]*\).*/\1/p'
}
for b in $("$troupe" --bench=list); do
  for w in 1 2; do
    t=$(check_of "$troupe" --bench="$b" --workers=$w --quick=1)
    if [ -z "$caf" ]; then
      echo "savina $b workers=$w: troupe $t (no CAF twin to compare)"
      [ -n "$t" ] && [ "$t" != FAIL ] || status=1
      continue
    fi
    c=$(check_of "$caf" --bench="$b" --workers=$w --quick=1)
    if [ -n "$t" ] && [ "$t" != FAIL ] && [ "$t" = "$c" ]; then
      echo "savina $b workers=$w: troupe $t = caf $c"
    else
      echo "savina $b workers=$w: MISMATCH troupe '$t' caf '$c'"
      status=1
    fi
  done
done
[ $status = 0 ] && [ -z "$caf" ] && { echo "savina: CAF twin not built (libcaf-dev missing): SKIP"; exit 77; }
exit $status
