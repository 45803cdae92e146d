#!/usr/bin/env python3
"""Names the tests a meson test run failed, with the last lines each printed.

Usage: failed_tests.py BUILD/meson-logs/testlog.json

scripts/test.sh prints this again at the very end of a run, so a log that
keeps only its tail (a CI summary) still says which test failed and how.
"""
import json
import sys


def main() -> int:
    path = sys.argv[1]
    failed = 0
    try:
        log = open(path, encoding="utf-8")
    except OSError as error:
        print(f"  no test log at {path}: {error.strerror}")
        return 1
    with log:
        for line in log:
            line = line.strip()
            if not line:
                continue
            entry = json.loads(line)
            if entry.get("result") in ("OK", "EXPECTEDFAIL", "SKIP"):
                continue
            failed += 1
            print(f"  {entry.get('name', '?')}: {entry.get('result')}"
                  f" after {entry.get('duration', 0):.1f} s")
            text = ((entry.get("stdout") or "") + (entry.get("stderr") or "")).strip()
            for tail in text.splitlines()[-12:]:
                print(f"    | {tail[:300]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
