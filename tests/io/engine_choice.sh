#!/usr/bin/env bash
# The engine choice: TROUPE_IO=epoll|uring|<nonsense>, and the fallback
# when the kernel refuses io_uring (one notice, epoll, working I/O).
# Usage: engine_choice.sh <engine_probe>
set -u
probe=$1
fail() { echo "FAIL: $*"; exit 1; }
out=$(TROUPE_IO=epoll "$probe" 2>&1) || fail "TROUPE_IO=epoll: $out"
grep -q "engine=epoll" <<<"$out" || fail "TROUPE_IO=epoll chose: $out"
built=$(sed -n 's/.*built=\([01]\).*/\1/p' <<<"$out")
out=$(TROUPE_IO=uring "$probe" 2>&1) || fail "TROUPE_IO=uring: $out"
if [ "$built" = 1 ]; then
  grep -q "engine=io_uring" <<<"$out" || fail "TROUPE_IO=uring chose: $out"
else
  grep -q "engine=epoll" <<<"$out" && grep -q "has no io_uring" <<<"$out" ||
    fail "TROUPE_IO=uring without io_uring built: $out"
fi
out=$(TROUPE_IO=nonsense "$probe" 2>&1) || fail "TROUPE_IO=nonsense: $out"
grep -q "TROUPE_IO=nonsense names no engine" <<<"$out" || fail "no notice for a bad TROUPE_IO: $out"
if [ "$built" = 1 ]; then
  out=$(env -u TROUPE_IO "$probe" --deny-io-uring 2>&1) || fail "fallback run: $out"
  grep -q "engine=epoll" <<<"$out" || fail "no fallback to epoll: $out"
  [ "$(grep -c "io_uring is unavailable" <<<"$out")" = 1 ] || fail "not exactly one notice: $out"
fi
echo "engine choice OK"
