#!/usr/bin/env bash
# BGSAVE under load, and start-up load time, side by side. For each server
# (pinned to CPU 1, load generator on CPU 0, as ../shared/bench does):
#   1. fill N keys "key:%012d" (the names redis-benchmark -r uses) with
#      64-byte values through redis-cli --pipe;
#   2. a GET load of G requests over the same keys (-c 50, -P 1) alone, then
#      the same load with BGSAVE started as it begins: rps, p50/p99/max, and
#      how long the save took (INFO polled every 10 ms) and its COW size;
#   3. the dump.rdb written by the FIRST server is loaded by every server at
#      start-up: milliseconds from exec to the first PONG, median of R runs.
#   perf/bgsave_latency.sh [-n N] [-g G] [-r R] SERVER_CMD [SERVER_CMD...]
set -euo pipefail
N=1000000
G=200000
R=3
while getopts "n:g:r:" o; do case $o in n) N=$OPTARG ;; g) G=$OPTARG ;; r) R=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-n N] [-g G] [-r R] SERVER_CMD..." >&2; exit 2; }
work=$(mktemp -d /tmp/bgsave-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
start_server() {  # cmd dir port -> pid in $pid
  local argv
  eval "argv=($1)"
  taskset -c 1 "${argv[@]}" --port "$3" --dir "$2" --save "" --appendonly no --bind 127.0.0.1 >"$2/log" 2>&1 &
  pid=$!
  pids+=("$pid")
}
wait_pong() { for _ in $(seq 2000); do [[ $(redis-cli -p "$1" ping 2>/dev/null) == PONG ]] && return 0; sleep 0.01; done; return 1; }
stop_server() { redis-cli -p "$1" shutdown nosave >/dev/null 2>&1 || true; wait "$2" 2>/dev/null || true; }
get_load() {  # port -> "rps p50 p99 max"
  taskset -c 0 redis-benchmark -p "$1" -t get -n "$G" -r "$N" -c 50 -P 1 --csv 2>/dev/null |
    grep -v '^"test"' | tail -1 | tr -d '"' | awk -F, '{print $2, $5, $7, $8}'
}

python3 - "$N" >"$work/fill.resp" <<'PY'
import sys
n = int(sys.argv[1]); v = b"v" * 64; out = sys.stdout.buffer
for i in range(n):
    k = b"key:%012d" % i
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$64\r\n%s\r\n" % (len(k), k, v))
PY

printf "# bgsave_latency.sh %s  N=%d keys (64-byte values), GET load: %d requests, -c 50 -P 1\n" "$(date -u +%FT%TZ)" "$N" "$G"
printf "%-32s %-8s %9s %7s %7s %7s %8s %8s\n" server phase get_rps p50_ms p99_ms max_ms save_ms cow_MiB
i=0
for cmd in "$@"; do
  i=$((i + 1))
  dir="$work/s$i"
  mkdir -p "$dir"
  port=$(free_port)
  start_server "$cmd" "$dir" "$port"
  wait_pong "$port"
  redis-cli -p "$port" --pipe <"$work/fill.resp" >/dev/null
  read -r rps p50 p99 max <<<"$(get_load "$port")"
  printf "%-32s %-8s %9s %7s %7s %7s %8s %8s\n" "$cmd" idle "$rps" "$p50" "$p99" "$max" - -
  (get_load "$port" >"$dir/during") &
  loader=$!
  sleep 0.2
  t0=$(now_ms)
  redis-cli -p "$port" bgsave >/dev/null
  while [[ $(redis-cli -p "$port" info persistence | tr -d '\r' | awk -F: '/^rdb_bgsave_in_progress/ {print $2}') == 1 ]]; do
    sleep 0.01
  done
  save_ms=$(($(now_ms) - t0))
  cow=$(redis-cli -p "$port" info persistence | tr -d '\r' | awk -F: '/^rdb_last_cow_size/ {printf "%.1f", $2 / 1048576}')
  wait "$loader"
  read -r rps p50 p99 max <"$dir/during"
  printf "%-32s %-8s %9s %7s %7s %7s %8s %8s\n" "$cmd" bgsave "$rps" "$p50" "$p99" "$max" "$save_ms" "$cow"
  stop_server "$port" "$pid"
done

echo
printf "# start-up: every server loads %s's dump.rdb (%s bytes); ms from exec to first PONG, median of %d\n" \
  "$1" "$(stat -c %s "$work/s1/dump.rdb")" "$R"
printf "%-32s %10s %s\n" server load_ms runs
for cmd in "$@"; do
  runs=()
  for _ in $(seq "$R"); do
    dir="$work/load"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$work/s1/dump.rdb" "$dir/dump.rdb"
    port=$(free_port)
    t0=$(now_ms)
    start_server "$cmd" "$dir" "$port"
    wait_pong "$port"
    runs+=($(($(now_ms) - t0)))
    keys=$(redis-cli -p "$port" dbsize)
    [[ $keys == "$N" ]] || echo "warning: $cmd loaded $keys keys" >&2
    stop_server "$port" "$pid"
  done
  median=$(printf '%s\n' "${runs[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf "%-32s %10s %s\n" "$cmd" "$median" "${runs[*]}"
done
