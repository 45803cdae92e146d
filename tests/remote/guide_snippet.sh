#!/bin/sh
# Checks that docs/guide.md's remote-actor snippet (the first ```cpp block
# of "### Remote actors") is examples/remote_hello.cpp from its
# "guide snippet begins" marker on, so the guide shows a program that
# compiles and terminates (the suite runs it under mpirun).
# Usage: guide_snippet.sh <guide.md> <remote_hello.cpp>
set -eu
guide=$1 example=$2
tmp=${TMPDIR:-/tmp}/troupe-guide-snippet.$$
trap 'rm -f "$tmp".a "$tmp".b' EXIT
awk '/^### Remote actors/ { f = 1 } f && /^```cpp/ { c = 1; next } c && /^```/ { exit } c' \
  "$guide" >"$tmp.a"
sed -n '/--- guide snippet begins/,$p' "$example" | tail -n +2 >"$tmp.b"
[ -s "$tmp.a" ] || { echo "no cpp block under '### Remote actors' in $guide"; exit 1; }
diff -u "$tmp.a" "$tmp.b" || {
  echo "docs/guide.md's remote snippet differs from examples/remote_hello.cpp (above)"; exit 1; }
