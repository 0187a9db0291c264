#!/usr/bin/env bash
# Usage: perf/profile_workload.sh SERVER_BINARY TAG WORKLOAD [OUT_DIR]
#   e.g. perf/profile_workload.sh build/ringkv-server after FCALL_10 /tmp/prof
#
# A relative CPU profile of the server under one of the P16 workloads of
# perf/bitmaps_bench.sh (PFADD) and perf/scripting_bench.sh (the others),
# for comparing where the time goes before and after a change. It claims no
# throughput: on a shared machine only the shares mean something.
#
# Starts SERVER_BINARY on a free port (--save "" --appendonly no), loads the
# scripts and the library exactly as scripting_bench.sh does, warms up with
# 50,000 requests (PFADD: the HLL turns dense), then records
#   perf record -e cpu-clock -g -p SERVER_PID
# while redis-benchmark -c 50 -P 16 runs N requests of the workload:
#   PFADD         N=3000000  pfadd hll __rand_int__              (-r 8000000)
#   EVALSHA_INCR  N=400000   evalsha <sha> 1 key:__rand_int__    (-r 100000)
#   EVALSHA_10    N=300000   evalsha <sha10> 1 key:__rand_int__ 7
#   FCALL_INCR    N=1000000  fcall incr1 1 key:__rand_int__
#   FCALL_10      N=300000   fcall cmd10 1 key:__rand_int__ 7
# Writes OUT_DIR/TAG-WORKLOAD.data (perf's), .txt (flat profile by DSO and
# symbol, no children) and .dso.txt (shares by DSO). OUT_DIR defaults to
# /tmp/ringkv-prof.
set -euo pipefail
(($# >= 3)) || { sed -n '2,3p' "$0" >&2; exit 2; }
BIN=$1 TAG=$2 W=$3 OUT=${4:-/tmp/ringkv-prof}
mkdir -p "$OUT"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BIN" --port "$PORT" --save "" --appendonly no >"$OUT/$TAG-$W.log" 2>&1 &
SPID=$!
trap 'kill "$SPID" 2>/dev/null || true' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
# shellcheck source=scripting_workloads.sh
source "$(dirname "${BASH_SOURCE[0]}")/scripting_workloads.sh"
SHA_INCR=$(redis-cli -p "$PORT" script load "$SCRIPT_INCR")
SHA_10=$(redis-cli -p "$PORT" script load "$BODY10")
redis-cli -p "$PORT" function load "$LIBRARY" >/dev/null
case $W in
  PFADD) N=3000000 ARGS="-r 8000000 pfadd hll __rand_int__" ;;
  EVALSHA_INCR) N=400000 ARGS="-r 100000 evalsha $SHA_INCR 1 key:__rand_int__" ;;
  EVALSHA_10) N=300000 ARGS="-r 100000 evalsha $SHA_10 1 key:__rand_int__ 7" ;;
  FCALL_INCR) N=1000000 ARGS="-r 100000 fcall incr1 1 key:__rand_int__" ;;
  FCALL_10) N=300000 ARGS="-r 100000 fcall cmd10 1 key:__rand_int__ 7" ;;
  *) echo "unknown workload $W" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
redis-benchmark -p "$PORT" -c 50 -P 16 -n 50000 $ARGS -q >/dev/null
perf record -e cpu-clock -g -p "$SPID" -o "$OUT/$TAG-$W.data" 2>/dev/null &
RPID=$!
sleep 0.5
# shellcheck disable=SC2086
redis-benchmark -p "$PORT" -c 50 -P 16 -n "$N" $ARGS -q >/dev/null
kill -INT "$RPID"
wait "$RPID" || true
errors=$(redis-cli -p "$PORT" info stats | tr -d '\r' | awk -F: '$1 == "total_error_replies" {print $2}')
[[ $errors == 0 ]] || echo "warning: $errors error replies during the run" >&2
report() { perf report -i "$OUT/$TAG-$W.data" --no-children -g none --stdio "$@" 2>/dev/null | grep '%' || true; }
report --percent-limit 0.3 --sort dso,symbol >"$OUT/$TAG-$W.txt"
report --sort dso >"$OUT/$TAG-$W.dso.txt"
echo "$OUT/$TAG-$W.txt"
