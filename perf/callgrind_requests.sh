#!/usr/bin/env bash
# Usage: perf/callgrind_requests.sh BINARY WORKLOAD [N]  -> user-space instructions per request
# WORKLOAD: EVALSHA_10, FCALL_10, EVALSHA_INCR, FCALL_INCR (the scripts of perf/scripting_workloads.sh),
# or PING, SET, GET (redis-benchmark's own, 64-byte values, 100,000 keys): the hot path;
# WAIT is `WAIT 10 1` with no replicas (issue 24's WAIT row: block, time out, answer).
# No hardware counters on this VM (perf stat: instructions <not supported>),
# so the count is callgrind's Ir: the server runs under valgrind with
# instrumentation off; after a 5,000-request warm-up it is switched on for
# redis-benchmark -c 50 -P 16 -n N, then off; Ir / N is printed.
# PIPELINE=1 (environment) measures without pipelining instead; the floor
# servers of ../shared/bench/floor can be measured the same way (PING).
set -euo pipefail
BIN=$1 W=$2 N=${3:-20000} PIPE=${PIPELINE:-16}
# shellcheck source=scripting_workloads.sh
source "$(dirname "${BASH_SOURCE[0]}")/scripting_workloads.sh"
OUT=${CG_DIR:-/tmp}/callgrind.$W.$$
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT" "$BIN" --port "$PORT" --save "" --appendonly no >/dev/null 2>&1 &
SPID=$!
trap 'kill "$SPID" 2>/dev/null || true' EXIT
for _ in $(seq 300); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
SHA_INCR=$(redis-cli -p "$PORT" script load "$SCRIPT_INCR")
SHA_10=$(redis-cli -p "$PORT" script load "$BODY10")
redis-cli -p "$PORT" function load "$LIBRARY" >/dev/null
case $W in
  EVALSHA_INCR) ARGS="-r 100000 evalsha $SHA_INCR 1 key:__rand_int__" ;;
  EVALSHA_10) ARGS="-r 100000 evalsha $SHA_10 1 key:__rand_int__ 7" ;;
  FCALL_INCR) ARGS="-r 100000 fcall incr1 1 key:__rand_int__" ;;
  FCALL_10) ARGS="-r 100000 fcall cmd10 1 key:__rand_int__ 7" ;;
  PING) ARGS="-t ping_mbulk" ;;
  SET) ARGS="-t set -r 100000 -d 64" ;;
  GET) ARGS="-t get -r 100000 -d 64" ;;
  WAIT) ARGS="wait 10 1" ;;  # no replicas: each times out after 1 ms (use PIPELINE=1)
  *) echo "unknown workload $W" >&2; exit 2 ;;
esac
# GET reads keys that exist (most of the 100,000).
[[ $W == GET ]] && redis-benchmark -p "$PORT" -c 50 -P 16 -n 300000 -t set -r 100000 -d 64 -q >/dev/null
# shellcheck disable=SC2086
redis-benchmark -p "$PORT" -c 50 -P "$PIPE" -n 5000 -q $ARGS >/dev/null
callgrind_control -i on "$SPID" >/dev/null
# shellcheck disable=SC2086
redis-benchmark -p "$PORT" -c 50 -P "$PIPE" -n "$N" -q $ARGS >/dev/null
callgrind_control -i off "$SPID" >/dev/null
errors=$(redis-cli -p "$PORT" info stats | tr -d '\r' | awk -F: '$1 == "total_error_replies" {print $2}')
kill "$SPID"; wait "$SPID" || true
trap - EXIT
# awk reads to the end: an early exit made callgrind_annotate die of SIGPIPE
# on a long profile (EVALSHA_10), and pipefail ended the script unprinted.
ir=$(callgrind_annotate "$OUT" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}')
echo "$W $(basename "$BIN") Ir/req=$((ir / N)) errors=$errors out=$OUT"
