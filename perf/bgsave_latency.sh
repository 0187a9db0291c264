#!/usr/bin/env bash
# BGSAVE under load, and start-up load time, side by side. For each server
# (pinned to CPU 1, load generator on CPU 0, as ../shared/bench does):
#   1. fill N keys "key:%012d" (the names redis-benchmark -r uses) with
#      64-byte values through redis-cli --pipe;
#   2. a load of G requests over the same keys (-c 50, -P 1) alone, then the
#      same load with BGSAVE started as it begins: rps, p50/p99/max, and how
#      long the save took (INFO polled every 10 ms) and its COW size. With
#      -w PCT, PCT% of the requests are SETs of 64-byte values (a second
#      redis-benchmark with its share of the 50 clients; its rps and p99 are
#      the set_* columns), the rest GETs;
#      memory during the save: the server's RSS before it (rss0), its peak
#      RSS (VmHWM, reset before the save), and the peak of server + child
#      proportional set size (Pss from smaps_rollup every 50 ms: shared
#      copy-on-write pages counted once), also as a ratio to rss0 -- the
#      memory the machine needs for a snapshot; latest_fork_usec;
#   3. the dump.rdb written by the FIRST server is loaded by every server at
#      start-up: milliseconds from exec to the first PONG, median of R runs.
#   perf/bgsave_latency.sh [-n N] [-g G] [-r R] [-w PCT] SERVER_CMD [SERVER_CMD...]
#   e.g. perf/bgsave_latency.sh -w 50 redis-server "build/ringkv-server" "build/ringkv-server --snapshot-fork no"
# Writes every SERVER_CMD's memory figures with the sampler on CPU 0 beside
# the load generator.
set -euo pipefail
N=1000000
G=200000
R=3
W=0
while getopts "n:g:r:w:" o; do
  case $o in n) N=$OPTARG ;; g) G=$OPTARG ;; r) R=$OPTARG ;; w) W=$OPTARG ;; *) exit 2 ;; esac
done
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
SET_N=$((G * W / 100))
GET_N=$((G - SET_N))
SET_C=$((W > 0 ? (50 * W + 50) / 100 : 0))
GET_C=$((50 - SET_C))
bench() {  # port test requests clients -> "rps p50 p99 max"
  taskset -c 0 redis-benchmark -p "$1" -t "$2" -n "$3" -r "$N" -d 64 -c "$4" -P 1 --csv 2>/dev/null |
    grep -v '^"test"' | tail -1 | tr -d '"' | awk -F, '{print $2, $5, $7, $8}'
}
get_load() {  # port -> "rps p50 p99 max set_rps set_p99"
  local sets=""
  if ((SET_N > 0)); then
    bench "$1" set "$SET_N" "$SET_C" >"$work/set.$1" &
    sets=$!
  fi
  local g
  g=$(bench "$1" get "$GET_N" "$GET_C")
  if [[ -n $sets ]]; then
    wait "$sets"
    read -r srps _ sp99 _ <"$work/set.$1"
    echo "$g $srps $sp99"
  else
    echo "$g - -"
  fi
}
kb_field() { awk -v f="$2:" '$1 == f {print $2}' "$1" 2>/dev/null || echo 0; }  # file field -> kB
pss_kb() { local v; v=$(kb_field "/proc/$1/smaps_rollup" Pss); echo "${v:-0}"; }
child_of() { cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -m1 . || true; }

python3 - "$N" >"$work/fill.resp" <<'PY'
import sys
n = int(sys.argv[1]); v = b"v" * 64; out = sys.stdout.buffer
for i in range(n):
    k = b"key:%012d" % i
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$64\r\n%s\r\n" % (len(k), k, v))
PY

printf "# bgsave_latency.sh %s  N=%d keys (64-byte values), load: %d requests, -c 50 -P 1, %d%% SETs\n" \
  "$(date -u +%FT%TZ)" "$N" "$G" "$W"
printf "%-40s %-7s %8s %6s %6s %7s %8s %6s %7s %7s %6s %8s %8s %5s %8s\n" server phase get_rps p50_ms p99_ms \
  max_ms set_rps set_p99 save_ms cow_MiB rss0 peak_rss peak_pss x_rss0 fork_us
i=0
for cmd in "$@"; do
  i=$((i + 1))
  dir="$work/s$i"
  mkdir -p "$dir"
  port=$(free_port)
  start_server "$cmd" "$dir" "$port"
  wait_pong "$port"
  redis-cli -p "$port" --pipe <"$work/fill.resp" >/dev/null
  read -r rps p50 p99 max srps sp99 <<<"$(get_load "$port")"
  printf "%-40s %-7s %8s %6s %6s %7s %8s %6s %7s %7s %6s %8s %8s %5s %8s\n" "$cmd" idle "$rps" "$p50" "$p99" "$max" \
    "$srps" "$sp99" - - - - - - -
  (get_load "$port" >"$dir/during") &
  loader=$!
  sleep 0.2
  rss0=$(kb_field "/proc/$pid/status" VmRSS)
  echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || true  # resets VmHWM to the current RSS
  peak_pss=0
  t0=$(now_ms)
  last_pss=0
  redis-cli -p "$port" bgsave >/dev/null
  while [[ $(redis-cli -p "$port" info persistence | tr -d '\r' | awk -F: '/^rdb_bgsave_in_progress/ {print $2}') == 1 ]]; do
    if (($(now_ms) - last_pss >= 50)); then
      last_pss=$(now_ms)
      child=$(child_of "$pid")
      total=$(($(pss_kb "$pid") + (${child:-0} > 0 ? $(pss_kb "${child:-0}") : 0)))
      ((total > peak_pss)) && peak_pss=$total
    fi
    sleep 0.01
  done
  save_ms=$(($(now_ms) - t0))
  peak_rss=$(kb_field "/proc/$pid/status" VmHWM)
  ((peak_rss > peak_pss)) && peak_pss=$peak_rss  # a peak of the server alone between samples
  cow=$(redis-cli -p "$port" info persistence | tr -d '\r' | awk -F: '/^rdb_last_cow_size/ {printf "%.1f", $2 / 1048576}')
  fork_us=$(redis-cli -p "$port" info stats | tr -d '\r' | awk -F: '/^latest_fork_usec/ {print $2}')
  wait "$loader"
  read -r rps p50 p99 max srps sp99 <"$dir/during"
  printf "%-40s %-7s %8s %6s %6s %7s %8s %6s %7s %7s %6s %8s %8s %5s %8s\n" "$cmd" bgsave "$rps" "$p50" "$p99" "$max" \
    "$srps" "$sp99" "$save_ms" "$cow" "$((rss0 / 1024))" "$((peak_rss / 1024))" "$((peak_pss / 1024))" \
    "$(awk -v a="$peak_pss" -v b="$rss0" 'BEGIN {printf "%.2f", a / b}')" "$fork_us"
  stop_server "$port" "$pid"
done

echo
printf "# start-up: every server loads %s's dump.rdb (%s bytes); ms from exec to first PONG, median of %d\n" \
  "$1" "$(stat -c %s "$work/s1/dump.rdb")" "$R"
printf "%-40s %10s %s\n" server load_ms runs
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
  printf "%-40s %10s %s\n" "$cmd" "$median" "${runs[*]}"
done
