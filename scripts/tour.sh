#!/usr/bin/env bash
# The examples tour: builds (release) the programs examples/TOUR.txt lists,
# and only those, then runs each in order.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "troupe tour: building troupe and the tour's examples (release, build/release)."
echo "The first build compiles the libraries and takes a few minutes on a small machine;"
echo "later runs start at once. Progress is shown as [done/total]."
bash scripts/deps.sh
dir="${BUILD_ROOT:-build}/release"
# Configure only (an empty target list builds nothing but build.ninja).
TARGETS=build.ninja bash scripts/build.sh release >/dev/null
examples=()
while read -r module ex; do
  [ -n "${ex:-}" ] && [ "${module:0:1}" != "#" ] || continue
  examples+=("$module $ex")
done < examples/TOUR.txt
known=$(ninja -C "$dir" -t targets all 2>/dev/null | cut -d: -f1)
targets=()
for e in "${examples[@]}"; do
  ex=${e#* }
  grep -qx "examples/$ex" <<<"$known" && targets+=("examples/$ex")
done
[ ${#targets[@]} -eq 0 ] || TARGETS="${targets[*]}" bash scripts/build.sh release
for e in "${examples[@]}"; do
  module=${e%% *} ex=${e#* }
  [ -x "$dir/examples/$ex" ] || { echo "(examples/$ex: needs module(s) ${module//+/, }, not built)"; continue; }
  echo
  echo "=== examples/$ex.cpp ($module)"
  "$dir/examples/$ex" </dev/null
done
