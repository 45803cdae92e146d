#!/bin/sh
# A rank that ends early or late fails what others need from it, at once and
# naming it, and nothing hangs (rank_end_program.cpp).
# Usage: rank_end.sh MPIRUN PROGRAM before|after NP
mpirun=$1 prog=$2 mode=$3 np=$4
last=$((np - 1))
out=$(timeout -s KILL 60 "$mpirun" --allow-run-as-root --oversubscribe --bind-to none \
      -np "$np" "$prog" "$mode" 2>&1)
rc=$?
fail() { echo "rank_end $mode -np $np: $1"; echo "$out"; exit 1; }
[ $rc = 0 ] || fail "mpirun exited with $rc (137: killed after 60 s, a hang)"
if [ "$mode" = monitor ]; then
  echo "$out" | grep -q "rank $last: world ends early" || fail "the last rank's world did not end"
  r=0
  while [ $r -lt $last ]; do
    for c in down "late down" "new down"; do
      echo "$out" | grep -qx "rank $r: $c: rank lost: rank $last lost" ||
        fail "rank $r: '$c' was not 'rank lost: rank $last lost'"
    done
    echo "$out" | grep -qx "rank $r: downs: 3" || fail "rank $r: not exactly one down per monitor"
    echo "$out" | grep -qx "rank $r: ends" || fail "rank $r did not end"
    r=$((r + 1))
  done
  echo "$out"
  exit 0
fi
if [ "$mode" = before ]; then
  checks="barrier lookup second_barrier"
  echo "$out" | grep -q "rank $last: returns early" || fail "the last rank did not return early"
else
  checks="waiting_ask lookup new_ask send barrier"
  echo "$out" | grep -q "rank $last: returns after the barrier" || fail "the last rank did not end"
fi
r=0
while [ $r -lt $last ]; do
  for c in $checks; do
    what=$(echo "$c" | tr _ ' ')
    want=$last
    # A later barrier fails for whichever ended rank it finds first (with 3
    # ranks another may have ended by then too).
    case "$mode $c" in "after barrier" | "before second_barrier") want='[0-9]*' ;; esac
    echo "$out" | grep -qx "rank $r: $what: rank_lost $want named" ||
      fail "rank $r: '$what' did not fail with rank_lost naming rank $last"
  done
  echo "$out" | grep -qx "rank $r: ends" || fail "rank $r did not end"
  r=$((r + 1))
done
echo "$out"
