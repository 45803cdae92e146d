#!/usr/bin/env bash
# Compile-fail test: compiles SOURCE with the given compiler command and
# include flags; passes iff compilation fails and the diagnostic contains
# EXPECT (or, with EXPECT "-", iff compilation succeeds).
# Usage: compile_fail.sh SOURCE EXPECT COMPILER [ARGS...]
set -u
src=$1 expect=$2
shift 2
out=$("$@" -std=c++20 -fsyntax-only "$src" 2>&1)
status=$?
if [ "$expect" = "-" ]; then
  [ $status -eq 0 ] && exit 0
  echo "expected $src to compile, it did not:"; echo "$out"; exit 1
fi
if [ $status -eq 0 ]; then
  echo "expected $src not to compile, but it did"; exit 1
fi
if ! grep -qF -- "$expect" <<<"$out"; then
  echo "compilation failed, but without the expected message '$expect':"; echo "$out"; exit 1
fi
exit 0
