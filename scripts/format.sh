#!/usr/bin/env bash
# Formats troupe's C++ sources with clang-format (.clang-format at the root).
# Usage: scripts/format.sh           format every tracked C++ file in place
#                                    (not the configure_file templates *.in,
#                                    whose @VAR@ tokens it would break)
#        scripts/format.sh --check   change nothing; list the files that are
#                                    not formatted and exit 1 if there are any
# Installs clang-format (Debian 12: clang-format 14) if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || bash scripts/deps.sh clang-format
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "troupe: ${#bad[@]} file(s) not formatted (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "troupe: all ${#files[@]} C++ files formatted"
elif [ $# -eq 0 ]; then
  clang-format -i "${files[@]}"
else
  echo "usage: scripts/format.sh [--check]" >&2
  exit 2
fi
