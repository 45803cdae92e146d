#!/usr/bin/env bash
# scripts/check_skips.py fails a run that skipped a test and passes one that
# did not: a skip on a machine scripts/test.sh prepared must not go unseen.
set -euo pipefail
check=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' '{"name": "a", "result": "OK", "stdout": ""}' \
  '{"name": "b", "result": "FAIL", "stdout": "x"}' >"$tmp/clean.json"
printf '%s\n' '{"name": "a", "result": "OK", "stdout": ""}' \
  '{"name": "savina_quick", "result": "SKIP", "stdout": "savina: CAF twin not built: SKIP\n"}' >"$tmp/skip.json"
python3 "$check" "$tmp/clean.json" || { echo "a log without skips was rejected"; exit 1; }
if python3 "$check" "$tmp/skip.json" 2>"$tmp/err"; then
  echo "a log with a skipped test was accepted"; exit 1
fi
grep -q "savina_quick" "$tmp/err" || { echo "the report does not name the skipped test"; cat "$tmp/err"; exit 1; }
echo "check_skips: ok"
