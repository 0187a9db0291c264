#!/usr/bin/env bash
# Worst single-command latency while loading many keys, side by side: each
# server starts empty on a free port (pinned to CPU 1, the load generator to
# CPU 0, as ../shared/bench does) and redis-benchmark SETs N random keys from a
# keyspace of 10^9 (nearly all distinct), reporting its latency summary.
# Table growth is what this exposes: a server that rehashes its whole table
# at once stalls every client for the duration.
#   perf/load_latency.sh [-n N] SERVER_CMD [SERVER_CMD...]
set -euo pipefail
N=10000000
while getopts "n:" o; do case $o in n) N=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-n N] SERVER_CMD..." >&2; exit 2; }
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
printf "# load_latency.sh %s  N=%d SETs, -r 1000000000, -P 16, -c 50, 64-byte values\n" "$(date -u +%FT%TZ)" "$N"
printf "%-40s %10s %8s %8s %8s %9s %8s %10s\n" server rps avg_ms p50_ms p99_ms max_ms keys rss_MiB
for cmd in "$@"; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  eval "argv=($cmd)"
  taskset -c 1 "${argv[@]}" --port "$port" --save "" --appendonly no --bind 127.0.0.1 >/dev/null 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  line=$(taskset -c 0 redis-benchmark -p "$port" -t set -n "$N" -r 1000000000 -P 16 -c 50 -d 64 --csv 2>/dev/null |
    grep -v '^"test"' | tail -1 | tr -d '"')
  IFS=, read -r _ rps avg _ p50 _ p99 max <<<"$line"
  keys=$(redis-cli -p "$port" dbsize)
  rss=$(awk '/^VmRSS:/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
  printf "%-40s %10s %8s %8s %8s %9s %8s %10s\n" "$cmd" "$rps" "$avg" "$p50" "$p99" "$max" "$keys" "$rss"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
done
