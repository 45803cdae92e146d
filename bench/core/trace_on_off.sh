#!/usr/bin/env bash
# on/off A/B of chan_contend 1+1 from one build (TROUPE_TRACE set / unset),
# alternating the order per round: RESULT lines with mode=on|off.
#   RUNS=5 MS=1000 BUILD=$PWD/build/release bench/core/trace_on_off.sh
B=${BUILD:?BUILD must name a release build directory}/bench/channels/channels_chan_contend
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--producers=1 --consumers=1 --ms=${MS:-1000} --capacity=128 --processors=2)
echo "# $(uptime)"
for r in $(seq 1 ${RUNS:-7}); do
  if [ $((r % 2)) = 1 ]; then order="off on"; else order="on off"; fi
  for m in $order; do
    if [ $m = on ]; then v=$(TROUPE_TRACE=$tmp/trace.json $B "${args[@]}" 2>/dev/null | grep RESULT); else v=$(env -u TROUPE_TRACE $B "${args[@]}" | grep RESULT); fi
    echo "$v mode=$m"
  done
done
echo "# $(uptime)"
