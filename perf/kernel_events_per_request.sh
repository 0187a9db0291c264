#!/usr/bin/env bash
# Kernel events per request of one server: loop turns (io_uring_enter),
# context switches and kernel timers started and cancelled, beside its CPU
# per request (`perf stat` attached to the server for the whole run).
#   perf/kernel_events_per_request.sh ROUNDS N "REDIS-BENCHMARK TEST ARGS" SERVER...
#   perf/kernel_events_per_request.sh 2 300000 "-t ping_mbulk" /tmp/bench/uring_pong build/ringkv-server
# Each server (CPU 1) is started fresh per run as `SERVER --port P --save ""
# --appendonly no`; redis-benchmark -c 50 -n N TEST runs on CPU 0.
set -euo pipefail
(($# >= 4)) || { sed -n '4,5p' "$0" >&2; exit 2; }
ROUNDS=$1 N=$2 TEST=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
events=task-clock,context-switches,syscalls:sys_enter_io_uring_enter,timer:hrtimer_start,timer:hrtimer_cancel
for round in $(seq "$ROUNDS"); do
  for server in "$@"; do
    port=$(free_port)
    # shellcheck disable=SC2086
    taskset -c 1 $server --port "$port" --save "" --appendonly no >/dev/null 2>&1 &
    spid=$!
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    perf stat -x, -e "$events" -p "$spid" -o "$work/stat" &
    ppid=$!
    sleep 0.2
    # shellcheck disable=SC2086
    taskset -c 0 redis-benchmark -p "$port" -c 50 -n "$N" $TEST -q >/dev/null 2>&1
    kill -INT "$ppid"
    wait "$ppid" 2>/dev/null || true
    kill "$spid"
    wait "$spid" 2>/dev/null || true
    awk -F, -v n="$N" -v r="$round" -v s="$server" '
      /task-clock/ { printf "%d %-32s cpu_us/req %.3f", r, s, $1 * 1000 / n }
      !/task-clock/ && $3 != "" { sub(/^.*:/, "", $3); printf "  %s %.3f", $3, $1 / n }
      END { print "" }' "$work/stat"
  done
done
