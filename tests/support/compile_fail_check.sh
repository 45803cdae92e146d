#!/usr/bin/env bash
# Compile-fail test: compiles FILE and passes only if the compiler rejects it
# with a diagnostic containing the text of the file's "// expect:" line.
# Usage: compile_fail_check.sh FILE COMPILER [ARGS...]
set -u
file=$1; shift
expect=$(sed -n 's|^// expect: ||p' "$file" | head -1)
if out=$("$@" -fsyntax-only "$file" 2>&1); then
    echo "compiled, but must not: $file"
    exit 1
fi
if ! grep -qF -- "$expect" <<<"$out"; then
    echo "rejected, but without the expected diagnostic '$expect':"
    echo "$out" | head -20
    exit 1
fi
echo "rejected as expected: $expect"
