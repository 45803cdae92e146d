#!/usr/bin/env bash
# Runs the whole test suite. Installs what is missing and builds first.
# Usage: scripts/test.sh [release|asan|tsan|all]   (default: all three)
# With release, also: the documentation's relative links
# (scripts/check_links.py) and each way a user consumes troupe
# (tests/consumers/run.sh: Meson subproject, pkg-config, CMake).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
configs=("${@:-all}")
[ "${configs[0]}" = all ] && configs=(release asan tsan)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
# die_after_fork=0: a test forks a child that starts a cluster (the affinity
# test); the parent already runs troupe's watch thread (docs/core.md).
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:die_after_fork=0}
status=0
# What failed, said again at the very end: a CI log that keeps only its tail
# must still name the failing phase and test.
failures=()
# Each phase's wall time, so a slow CI run says where its time went.
phase_start=$SECONDS
phase_done() { echo "== troupe time: $1 took $((SECONDS - phase_start)) s (total $SECONDS s)"; phase_start=$SECONDS; }
phase_done "installing packages"
for cfg in "${configs[@]}"; do
  echo "== troupe tests: $cfg"
  bash scripts/build.sh "$cfg"
  phase_done "building $cfg"
  run=()
  # gcc 12's TSan cannot map its shadow under the high mmap entropy of newer
  # kernels; running without address randomisation avoids that.
  [ "$cfg" = tsan ] && command -v setarch >/dev/null && run=(setarch "$(uname -m)" -R)
  if ! "${run[@]}" meson test -C "${BUILD_ROOT:-build}/$cfg" --print-errorlogs --num-processes 2 \
        --timeout-multiplier 3; then
    status=1
    failures+=("$cfg tests")
  fi
  # A skipped test is a check that did not run: on a machine this script
  # prepared (every package of scripts/deps.sh installed) none may skip.
  if ! python3 scripts/check_skips.py "${BUILD_ROOT:-build}/$cfg/meson-logs/testlog.json"; then
    status=1
    failures+=("$cfg: a test was skipped")
  fi
  phase_done "testing $cfg"
  if [ "$cfg" = release ]; then
    echo "== troupe docs: relative links"
    python3 scripts/check_links.py || { status=1; failures+=("documentation links"); }
    echo "== troupe consumers: subproject, pkg-config, CMake"
    bash tests/consumers/run.sh || { status=1; failures+=("consumers"); }
    phase_done "consumers"
  fi
done
if [ $status = 0 ]; then
  echo "== troupe: every phase passed (${configs[*]})"
else
  echo "== troupe: FAILED: ${failures[*]/%/;}"
  for cfg in "${configs[@]}"; do
    log="${BUILD_ROOT:-build}/$cfg/meson-logs/testlog.json"
    [ -f "$log" ] || continue
    python3 scripts/failed_tests.py "$log" >/tmp/troupe_failed.$$ || { echo "== $cfg:"; cat /tmp/troupe_failed.$$; }
    rm -f /tmp/troupe_failed.$$
  done
fi
exit $status
