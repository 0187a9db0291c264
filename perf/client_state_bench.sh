#!/usr/bin/env bash
# Client-state workloads side by side: for each server command, the server on
# CPU 1 and build/perf/client_state_bench on CPU 0.
#   - MULTI + 10 SETs + EXEC, 50 connections (transactions/s, server CPU per
#     transaction);
#   - BLPOP/LPUSH ping-pong between two connections (round trips/s and
#     round-trip latency; each round is two blocking wake-ups);
#   - how late a 50 ms BLPOP timeout answers (TIMEOUTS calls).
# Repeated ROUNDS times (fresh servers each round); every line is printed.
#   perf/client_state_bench.sh [-r ROUNDS] SERVER_CMD...
set -euo pipefail
BENCH=${CLIENT_STATE_BENCH:-build/perf/client_state_bench}
ROUNDS=1
if [[ ${1:-} == -r ]]; then ROUNDS=$2; shift 2; fi
(($# >= 1)) || { echo "usage: $0 [-r ROUNDS] SERVER_CMD..." >&2; exit 2; }
work=$(mktemp -d /tmp/client-state-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"
SERVER_EXTRA=()
TX=${TX:-200000}
PINGS=${PINGS:-20000}
TIMEOUTS=${TIMEOUTS:-100}
printf "# client_state_bench.sh %s  (TX=%s PINGS=%s)\n" "$(date -u +%FT%TZ)" "$TX" "$PINGS"
for round in $(seq "$ROUNDS"); do
  i=0
  for cmd in "$@"; do
    i=$((i + 1))
    port=$(free_port)
    start_server "$cmd" "$work/$round-$i" "$port"
    spid=${pids[-1]}
    t0=$(cpu_ticks "$spid")
    line=$(taskset -c 0 "$BENCH" -m multi -p "$port" -c 50 -n "$TX")
    t1=$(cpu_ticks "$spid")
    us=$(awk -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v n="$TX" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
    printf "round=%s %-32s multi10  %s server_us_per_tx=%s\n" "$round" "$cmd" "$line" "$us"
    line=$(taskset -c 0 "$BENCH" -m pingpong -p "$port" -n "$PINGS")
    printf "round=%s %-32s pingpong %s\n" "$round" "$cmd" "$line"
    line=$(taskset -c 0 "$BENCH" -m timeout -p "$port" -n "$TIMEOUTS")
    printf "round=%s %-32s timeout  %s\n" "$round" "$cmd" "$line"
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    sleep 0.3
  done
done
