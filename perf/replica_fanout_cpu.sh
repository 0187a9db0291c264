#!/usr/bin/env bash
# Primary CPU per write with R replicas attached, side by side: for each
# server command, a primary (CPU 1) and R replicas of the same kind (CPU 1),
# redis-benchmark SET -P 16 on CPU 0; reports the primary's rps and its CPU
# time per request (utime + stime from /proc, during the run only).
#   perf/replica_fanout_cpu.sh [-r REPLICAS] [-n REQUESTS] SERVER_CMD...
set -euo pipefail
R=2
N=2000000
while getopts "r:n:" o; do case $o in r) R=$OPTARG ;; n) N=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-r R] [-n N] SERVER_CMD..." >&2; exit 2; }
work=$(mktemp -d /tmp/fanout.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"
SERVER_EXTRA=(--repl-backlog-size 64mb --repl-diskless-sync-delay 0)
start() { start_server "$@"; }
hz=$(getconf CLK_TCK)
printf "# replica_fanout_cpu.sh %s  replicas=%d requests=%d\n" "$(date -u +%FT%TZ)" "$R" "$N"
printf "%-32s %12s %16s\n" server rps primary_us_per_req
i=0
for cmd in "$@"; do
  i=$((i + 1))
  pp=$(free_port)
  start "$cmd" "$work/$i/p" "$pp"
  ppid=${pids[-1]}
  for r in $(seq "$R"); do
    rp=$(free_port)
    start "$cmd" "$work/$i/r$r" "$rp" --replicaof "127.0.0.1 $pp"
    for _ in $(seq 1000); do
      [[ $(redis-cli -p "$rp" info replication | tr -d '\r' | awk -F: '/^master_link_status/ {print $2}') == up ]] && break
      sleep 0.01
    done
  done
  t0=$(cpu_ticks "$ppid")
  rps=$(taskset -c 0 redis-benchmark -p "$pp" -c 50 -n "$N" -r 100000 -P 16 -t set --csv 2>/dev/null |
    grep -v '^"test"' | tail -1 | tr -d '"' | awk -F, '{print $2}')
  t1=$(cpu_ticks "$ppid")
  us=$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$N" 'BEGIN { printf "%.3f", t / hz * 1e6 / n }')
  printf "%-32s %12s %16s\n" "$cmd" "$rps" "$us"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  pids=()
  sleep 0.5
done
