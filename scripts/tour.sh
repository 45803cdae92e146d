#!/usr/bin/env bash
# The examples tour: builds (release) and runs each program in examples/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh release
grep -v '^#' examples/TOUR.txt | while read -r module ex; do
  [ -n "$ex" ] || continue
  echo
  echo "=== examples/$ex.cpp ($module)"
  "build/release/examples/$ex" </dev/null
done
