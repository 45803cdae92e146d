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
  asan)    opts=(-Dbuildtype=debugoptimized -Dchecked=true -Db_sanitize=address,undefined
                 -Db_lundef=false -Ddefault_library=static -Dbenchmarks=false) ;;
  tsan)    opts=(-Dbuildtype=debugoptimized -Dchecked=true -Db_sanitize=thread
                 -Db_lundef=false -Ddefault_library=static -Dbenchmarks=false) ;;
  *) echo "unknown configuration '$cfg' (release, asan, tsan)" >&2; exit 2 ;;
esac
# BUILD_ROOT lets parallel work use separate trees (default: build).
dir="${BUILD_ROOT:-build}/$cfg"
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "${opts[@]}" "$@" >/dev/null
fi
if [ -n "${TARGETS:-}" ]; then
  # shellcheck disable=SC2086
  ninja -C "$dir" $TARGETS
else
  ninja -C "$dir" >/dev/null || ninja -C "$dir"
fi
