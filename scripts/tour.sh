#!/usr/bin/env bash
# The examples tour: builds (release) and runs each program in examples/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh release
grep -v '^#' examples/TOUR.txt | while read -r module ex; do
  [ -n "$ex" ] || continue
  [ -x "build/release/examples/$ex" ] || { echo "(examples/$ex: needs module(s) ${module//+/, }, not built)"; continue; }
  echo
  echo "=== examples/$ex.cpp ($module)"
  run=("build/release/examples/$ex")
  # Remote-actor examples run as an MPI job of two ranks.
  [[ "$module" == *remote* ]] && run=(mpirun --allow-run-as-root --oversubscribe -np 2 "${run[@]}")
  "${run[@]}" </dev/null
done
