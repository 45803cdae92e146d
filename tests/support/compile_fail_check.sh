#!/usr/bin/env bash
# The one compile-fail mechanism of the suite. Compiles FILE and checks the
# outcome its first line declares:
#   // expect: TEXT    the compiler must reject FILE with a diagnostic
#                      containing TEXT (so a typo that fails for another
#                      reason does not pass);
#   // expect-compile  a control case: FILE must compile (so a failure of
#                      the cases means the case, not the harness).
# A file that declares neither fails.
# Usage: compile_fail_check.sh FILE COMPILER [ARGS...]
set -u
file=$1; shift
first=$(head -1 "$file")
case "$first" in
  "// expect-compile"*)
    if out=$("$@" -fsyntax-only "$file" 2>&1); then
      echo "control case compiles: $file"; exit 0
    fi
    echo "control case must compile, but did not: $file"; echo "$out" | head -20; exit 1 ;;
  "// expect: "?*)
    expect=${first#// expect: } ;;
  *)
    echo "$file: the first line must be '// expect: <diagnostic text>' or '// expect-compile'"
    exit 1 ;;
esac
if out=$("$@" -fsyntax-only "$file" 2>&1); then
  echo "compiled, but must not: $file"; exit 1
fi
if ! grep -qF -- "$expect" <<<"$out"; then
  echo "rejected, but without the expected diagnostic '$expect':"; echo "$out" | head -20; exit 1
fi
echo "rejected as expected: $expect"
