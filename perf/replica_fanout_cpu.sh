#!/usr/bin/env bash
# Primary CPU per replicated write with R replicas attached, side by side:
# for each R and each server command, a primary (CPU 1) and R replicas of
# the same kind (CPU 1), redis-benchmark SET -P 16 on CPU 0; reports the
# primary's rps and its CPU time per request (utime + stime from /proc,
# during the run only). Rounds interleave the servers, so a noisy moment
# hits them alike.
#   perf/replica_fanout_cpu.sh [-r "1 2 4"] [-n REQUESTS] [-k ROUNDS] SERVER_CMD...
# Example (before / after / the reference, one run):
#   perf/replica_fanout_cpu.sh -r "1 2 4" /tmp/ringkv-main build/ringkv-server redis-server
set -euo pipefail
RS="1 2 4"
N=1000000
K=1
while getopts "r:n:k:" o; do case $o in r) RS=$OPTARG ;; n) N=$OPTARG ;; k) K=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-r \"1 2 4\"] [-n N] [-k ROUNDS] SERVER_CMD..." >&2; exit 2; }
work=$(mktemp -d /tmp/fanout.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"
SERVER_EXTRA=(--repl-backlog-size 64mb --repl-diskless-sync-delay 0)
hz=$(getconf CLK_TCK)
printf "# replica_fanout_cpu.sh %s  replicas=%s requests=%d rounds=%d\n" "$(date -u +%FT%TZ)" "$RS" "$N" "$K"
printf "%-40s %8s %5s %12s %18s\n" server replicas round rps primary_us_per_req
i=0
for round in $(seq "$K"); do
  for R in $RS; do
    for cmd in "$@"; do
      i=$((i + 1))
      pp=$(free_port)
      start_server "$cmd" "$work/$i/p" "$pp"
      ppid=${pids[-1]}
      for r in $(seq "$R"); do
        rp=$(free_port)
        start_server "$cmd" "$work/$i/r$r" "$rp" --replicaof "127.0.0.1 $pp"
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
      printf "%-40s %8d %5d %12s %18s\n" "$cmd" "$R" "$round" "$rps" "$us"
      stop_servers
      rm -rf "${work:?}/$i"
    done
  done
done
