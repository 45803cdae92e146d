#!/usr/bin/env python3
"""Fails when a meson test run skipped a test (exit code 77).

Usage: check_skips.py BUILD/meson-logs/testlog.json

scripts/test.sh installs every package a check needs before it configures, so
on a machine it prepared a skip means a check was configured out or could not
run: the run must not pass silently. Each skip is named with its output.
"""
import json
import sys


def main() -> int:
    path = sys.argv[1]
    skipped = []
    with open(path, encoding="utf-8") as log:
        for line in log:
            line = line.strip()
            if not line:
                continue
            entry = json.loads(line)
            if entry.get("result") == "SKIP":
                out = (entry.get("stdout") or "").strip().splitlines()
                skipped.append((entry.get("name", "?"), out[-1] if out else ""))
    for name, last in skipped:
        print(f"troupe: test '{name}' was skipped on a prepared machine: {last}",
              file=sys.stderr)
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
