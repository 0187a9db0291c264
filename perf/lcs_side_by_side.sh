#!/usr/bin/env bash
# Usage: perf/lcs_side_by_side.sh [LEN] BINARY...  -> ms of `LCS a b LEN` and `LCS a b IDX` per server
# Each server (redis-server or ringkv-server) gets the same two random strings
# of LEN bytes (default 8,000; four letters, so many ties) and answers
# `LCS a b LEN` and `LCS a b IDX WITHMATCHLEN` five times each; printed: each
# call's wall time as redis-cli sees it (a redis-cli process included, a few
# ms), the length, the first match of `LCS a b IDX MINMATCHLEN 5` and a
# checksum of the whole IDX reply (all of which must agree), and the server's
# peak RSS (VmHWM) after the calls. redis-server's
# table is (LEN+1)^2 cells of 4 bytes (256 MB at 8,000); ringkv's since
# 2026-12-07 is bits, LEN+1 rows of LEN/64 words (8 MB), and LEN keeps two rows.
set -euo pipefail
LEN=8000
if [[ ${1:-} =~ ^[0-9]+$ ]]; then LEN=$1; shift; fi
[[ $# -ge 1 ]] || { echo "usage: $0 [LEN] BINARY..." >&2; exit 2; }
WORK=$(mktemp -d /tmp/lcs-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
python3 -c "import random; r = random.Random(7); print(''.join(r.choice('abcd') for _ in range($LEN)), end='')" >"$WORK/a"
python3 -c "import random; r = random.Random(8); print(''.join(r.choice('abcd') for _ in range($LEN)), end='')" >"$WORK/b"
for bin in "$@"; do
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  (cd "$WORK" && exec "$bin" --port "$port" --save "" --appendonly no >/dev/null 2>&1) &
  pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$port" -x set a <"$WORK/a" >/dev/null
  redis-cli -p "$port" -x set b <"$WORK/b" >/dev/null
  times=() idx_times=()
  for _ in 1 2 3 4 5; do
    start=$(date +%s%N)
    redis-cli -p "$port" lcs a b len >/dev/null
    times+=($((($(date +%s%N) - start) / 1000000)))
  done
  for _ in 1 2 3 4 5; do
    start=$(date +%s%N)
    redis-cli -p "$port" lcs a b idx withmatchlen >/dev/null
    idx_times+=($((($(date +%s%N) - start) / 1000000)))
  done
  first=$(redis-cli -p "$port" lcs a b idx minmatchlen 5 | sed -n 2,5p | tr '\n' ' ')
  sum=$(redis-cli -p "$port" lcs a b idx withmatchlen | md5sum | cut -c1-12)
  peak=$(awk '/VmHWM/ {print $2 " kB"}' "/proc/$pid/status")
  echo "$bin: LEN ms ${times[*]}; IDX ms ${idx_times[*]}; len $(redis-cli -p "$port" lcs a b len); first match $first; IDX reply $sum; peak RSS $peak"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
done
