#!/bin/sh
# A remote program started without mpirun says, on one line, that the job is
# a single rank, and still runs to its end.
# Usage: single_rank.sh PROGRAM
out=$("$1" 2>&1) || { echo "$1 failed without mpirun:"; echo "$out"; exit 1; }
n=$(printf '%s\n' "$out" | grep -c "troupe::remote: this job is a single rank")
[ "$n" = 1 ] || { echo "expected one single-rank notice, got $n:"; echo "$out"; exit 1; }
