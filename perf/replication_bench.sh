#!/usr/bin/env bash
# Replication figures, side by side: for each server command (the primary
# and its replicas share CPU 1; the load generator runs on CPU 0):
#   1. SET+WAIT 1 with one replica attached: C clients each sending
#      "SET key value" and "WAIT 1 0" together and waiting for both replies
#      (build/perf/set_wait_bench: redis-benchmark cannot send a pair).
#   2. Pipelined SET throughput of the primary with 0, 1 and 2 replicas.
#   3. Full sync time of N keys: REPLICAOF issued to a fresh replica, time
#      until master_link_status:up and the key count matches -- diskless
#      (repl-diskless-sync yes, delay 0: Redis's default transfer without its
#      5 s wait for more replicas) and through the primary's disk; the
#      replica loads through a file (repl-diskless-load disabled, default).
#   perf/replication_bench.sh [-n N] SERVER_CMD [SERVER_CMD...]
set -euo pipefail
N=1000000
SET_WAIT_BENCH=${SET_WAIT_BENCH:-build/perf/set_wait_bench}
while getopts "n:" o; do case $o in n) N=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-n N] SERVER_CMD..." >&2; exit 2; }
work=$(mktemp -d /tmp/repl-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"
SERVER_EXTRA=(--repl-backlog-size 64mb --maxclients 4096 --enable-debug-command yes)
start() { start_server "$@"; }
link_up() { [[ $(redis-cli -p "$1" info replication | tr -d '\r' | awk -F: '/^master_link_status/ {print $2}') == up ]]; }
wait_up() { for _ in $(seq 6000); do link_up "$1" && return 0; sleep 0.01; done; return 1; }
stop_all() { for p in "$@"; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done; sleep 0.3; }
bench() {  # port args... -> "rps p50 p99"
  local port=$1
  shift
  taskset -c 0 redis-benchmark -p "$port" "$@" --csv 2>/dev/null | grep -v '^"test"' | tail -1 | tr -d '"' |
    awk -F, '{print $2, $5, $7}'
}

printf "# replication_bench.sh %s  N=%d\n" "$(date -u +%FT%TZ)" "$N"
printf "%-28s %-22s %10s %8s %8s\n" server workload rps p50_ms p99_ms
i=0
for cmd in "$@"; do
  i=$((i + 1))
  pp=$(free_port); rp=$(free_port); r2=$(free_port)
  start "$cmd" "$work/$i/p" "$pp"
  start "$cmd" "$work/$i/r" "$rp" --replicaof "127.0.0.1 $pp"
  wait_up "$rp"
  for c in 50 1000; do
    line=$(taskset -c 0 "$SET_WAIT_BENCH" -p "$pp" -c "$c" -n 100000 -r 1 -t 0)
    rps=$(sed -E 's/.*pairs_per_sec=([0-9.]+).*/\1/' <<<"$line")
    p50=$(sed -E 's/.*p50_ms=([0-9.]+).*/\1/' <<<"$line")
    p99=$(sed -E 's/.*p99_ms=([0-9.]+).*/\1/' <<<"$line")
    printf "%-28s %-22s %10s %8s %8s\n" "$cmd" "SET+WAIT 1 0, c=$c" "$rps" "$p50" "$p99"
  done
  for replicas in 1 2; do
    if ((replicas == 2)); then
      start "$cmd" "$work/$i/r2" "$r2" --replicaof "127.0.0.1 $pp"
      wait_up "$r2"
    fi
    read -r rps p50 p99 <<<"$(bench "$pp" -c 50 -n 1000000 -r 100000 -P 16 -t set)"
    printf "%-28s %-22s %10s %8s %8s\n" "$cmd" "SET P16, $replicas replica(s)" "$rps" "$p50" "$p99"
  done
  stop_all "$pp" "$rp" "$r2"
  start "$cmd" "$work/$i/p0" "$pp"
  read -r rps p50 p99 <<<"$(bench "$pp" -c 50 -n 1000000 -r 100000 -P 16 -t set)"
  printf "%-28s %-22s %10s %8s %8s\n" "$cmd" "SET P16, 0 replicas" "$rps" "$p50" "$p99"
  # Full sync of N keys, streamed from the fork child and through a file.
  stop_all "$pp"
  for mode in yes no; do
    start "$cmd" "$work/$i/fp-$mode" "$pp" --repl-diskless-sync "$mode" --repl-diskless-sync-delay 0
    redis-cli -p "$pp" debug populate "$N" key 64 >/dev/null
    start "$cmd" "$work/$i/fs-$mode" "$rp"
    t0=$(now_ms)
    redis-cli -p "$rp" replicaof 127.0.0.1 "$pp" >/dev/null
    wait_up "$rp"
    for _ in $(seq 30000); do [[ $(redis-cli -p "$rp" dbsize) == "$N" ]] && break; sleep 0.01; done
    printf "%-28s %-22s %10s ms\n" "$cmd" "full sync $N, diskless $mode" "$(($(now_ms) - t0))"
    stop_all "$pp" "$rp"
  done
done
