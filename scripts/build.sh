#!/usr/bin/env bash
# Configures (once) and builds one configuration into build/<config>.
# Usage: scripts/build.sh release|asan|tsan [meson -D options...]
# TARGETS="examples/hello_threads ..." builds only those targets and shows
# ninja's progress (otherwise everything is built quietly).
set -euo pipefail
cd "$(dirname "$0")/.."
cfg=${1:-release}; shift || true
case "$cfg" in
  release) opts=(-Dbuildtype=release -Dchecked=false) ;;
  # The sanitizer trees build what their tests run: no benchmarks, and no
  # examples (the test suite does not run them; the release tree builds
  # them, and scripts/tour.sh runs them). Their debug information is -g1:
  # line tables and functions, inlined frames included, which is what a
  # sanitizer's report and gdb's backtrace show, at a sixth less compile
  # time than -g. ASan at -O1 as its documentation advises (a third less
  # compile time again); TSan keeps -O2, its tests being the slowest to run.
  asan)    opts=(-Dbuildtype=debugoptimized -Doptimization=1 -Dcpp_args=-g1 -Dchecked=true
                 -Db_sanitize=address,undefined -Db_lundef=false -Ddefault_library=static
                 -Dbenchmarks=false -Dexamples=false) ;;
  tsan)    opts=(-Dbuildtype=debugoptimized -Dcpp_args=-g1 -Dchecked=true -Db_sanitize=thread
                 -Db_lundef=false -Ddefault_library=static -Dbenchmarks=false -Dexamples=false) ;;
  *) echo "unknown configuration '$cfg' (release, asan, tsan)" >&2; exit 2 ;;
esac
# BUILD_ROOT lets parallel work use separate trees (default: build).
dir="${BUILD_ROOT:-build}/$cfg"
# The installed versions of the packages the build can find at configure time
# (scripts/deps.sh --list): a package installed or upgraded after the tree
# was configured reaches the build through a reconfigure, so a check is never
# left configured out (e.g. the Savina CAF twins when libcaf-dev came later).
deps_state=$(bash scripts/deps.sh --list | xargs dpkg-query -W -f='${Package} ${Version} ${Status}\n' 2>/dev/null || true)
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "${opts[@]}" "$@" >/dev/null
  printf '%s\n' "$deps_state" >"$dir/.troupe-deps"
elif [ "$deps_state" != "$(cat "$dir/.troupe-deps" 2>/dev/null)" ]; then
  echo "troupe: installed packages changed since $dir was configured: reconfiguring"
  meson setup --reconfigure "$dir" "${opts[@]}" "$@" >/dev/null
  printf '%s\n' "$deps_state" >"$dir/.troupe-deps"
fi
if [ -n "${TARGETS:-}" ]; then
  # shellcheck disable=SC2086
  ninja -C "$dir" $TARGETS
else
  # Quiet unless something is wrong: a failed build prints its log, and
  # compiler warnings are shown (the build is meant to have none).
  log="$dir/build.log"
  if ! ninja -C "$dir" >"$log" 2>&1; then
    # Once more, in the open: a step that failed for a passing reason
    # (a peer's toolchain racing on its cache) goes through, a real error
    # shows again.
    grep -B2 -A12 -E 'FAILED|error' "$log" | head -60
    echo "troupe: the $cfg build failed (above; $log); building again" >&2
    ninja -C "$dir" >"$log" 2>&1 || { cat "$log"; echo "troupe: the $cfg build failed" >&2; exit 1; }
  fi
  if grep -q 'warning:' "$log"; then
    grep -A4 'warning:' "$log"
    echo "troupe: the $cfg build has $(grep -c 'warning:' "$log") compiler warning(s) (above; $log)" >&2
  fi
fi
