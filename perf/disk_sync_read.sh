#!/usr/bin/env bash
# What a disk-based full sync of R replicas costs the primary: a primary
# with N keys (repl-diskless-sync no), R replicas started at once (they
# attach to one BGSAVE), until every one is online. Reports the RDB size,
# the bytes the primary read through system calls (/proc/PID/io rchar: the
# file once for everybody, or once per replica) and its CPU (utime + stime,
# 10 ms ticks) from the first REPLICAOF to the last replica online.
#   perf/disk_sync_read.sh [-r "1 2 4"] [-n KEYS] SERVER_CMD...
set -euo pipefail
reps="1 2 4"
keys=500000
while getopts "r:n:" o; do
  case $o in
    r) reps=$OPTARG ;;
    n) keys=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
work=$(mktemp -d /tmp/disksync.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"
SERVER_EXTRA=(--repl-diskless-sync no --rdbcompression no --repl-backlog-size 16mb --enable-debug-command yes)
field() { redis-cli -p "$1" info "$2" | tr -d '\r' | awk -F: -v f="$3" '$1 == f {print $2}'; }
rchar() { awk '/^rchar:/ {print $2}' "/proc/$1/io"; }
printf "# disk_sync_read.sh %s  keys=%s\n" "$(date -u +%FT%TZ)" "$keys"
printf "%-40s %8s %9s %12s %10s %8s\n" server replicas rdb_MB read_MB read/rdb cpu_ms
i=0
for cmd in "$@"; do
  for R in $reps; do
    i=$((i + 1))
    pp=$(free_port)
    start_server "$cmd" "$work/$i/p" "$pp"
    ppid=${pids[-1]}
    redis-cli -p "$pp" debug populate "$keys" key 100 >/dev/null
    rports=()
    for r in $(seq "$R"); do
      rp=$(free_port)
      start_server "$cmd" "$work/$i/r$r" "$rp"
      rports+=("$rp")
    done
    read0=$(rchar "$ppid")
    cpu0=$(cpu_ticks "$ppid")
    clis=()
    for rp in "${rports[@]}"; do
      redis-cli -p "$rp" replicaof 127.0.0.1 "$pp" >/dev/null &
      clis+=($!)
    done
    wait "${clis[@]}"
    for _ in $(seq 6000); do
      [[ $(redis-cli -p "$pp" info replication | grep -c 'state=online') -ge $R ]] && break
      sleep 0.01
    done
    read1=$(rchar "$ppid")
    cpu1=$(cpu_ticks "$ppid")
    size=$(stat -c %s "$work/$i/p/dump.rdb")
    awk -v c="$cmd" -v r="$R" -v s="$size" -v a="$read0" -v b="$read1" -v t0="$cpu0" -v t1="$cpu1" -v hz="$(getconf CLK_TCK)" \
      'BEGIN { printf "%-40s %8d %9.1f %12.1f %10.2f %8d\n", c, r, s / 1048576, (b - a) / 1048576, (b - a) / s, (t1 - t0) * 1000 / hz }'
    stop_servers
    rm -rf "${work:?}/$i"
  done
done
