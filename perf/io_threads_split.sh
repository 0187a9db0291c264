#!/usr/bin/env bash
# Where a request's CPU goes with io-threads N: the main thread's time (it
# executes every command, and does all I/O of its own share of the
# connections) against the other I/O threads' (receive, parse, send for
# theirs), per request, from /proc/PID/task/TID/stat during the run only.
#   perf/io_threads_split.sh [-n REQUESTS] [-t "1 2"] [-w "get set"] SERVER_CMD
# The server runs on CPUs SERVER_CPUS (default 0-1: all of this machine),
# redis-benchmark on CLIENT_CPUS (default 0-1): on 2 cores the load generator
# shares them, so read the split, not the rps.
set -euo pipefail
N=400000
TS="1 2"
WS="get set"
while getopts "n:t:w:" o; do case $o in n) N=$OPTARG ;; t) TS=$OPTARG ;; w) WS=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# == 1)) || { echo "usage: $0 [-n N] [-t THREADS] [-w WORKLOADS] SERVER_CMD" >&2; exit 2; }
: "${SERVER_CPUS:=0-1}" "${CLIENT_CPUS:=0-1}" "${PIPELINE:=16}"
work=$(mktemp -d /tmp/iosplit.XXXXXX)
pid=""
trap '[[ -n $pid ]] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# ticks of the main thread (tid == pid) and of all other threads
split_ticks() {
  local main=0 other=0 t v
  for t in /proc/"$1"/task/*; do
    v=$(awk '{print $14 + $15}' "$t/stat" 2>/dev/null) || continue
    if [[ ${t##*/} == "$1" ]]; then main=$((main + v)); else other=$((other + v)); fi
  done
  echo "$main $other"
}
hz=$(getconf CLK_TCK)
printf "# io_threads_split.sh %s  requests=%d pipeline=%d server_cpus=%s client_cpus=%s\n" \
  "$(date -u +%FT%TZ)" "$N" "$PIPELINE" "$SERVER_CPUS" "$CLIENT_CPUS"
printf "%-10s %-6s %10s %16s %18s %16s\n" io_threads test rps main_us_per_req others_us_per_req total_us_per_req
for t in $TS; do
  for w in $WS; do
    port=$(free_port)
    eval "argv=($1)"
    taskset -c "$SERVER_CPUS" "${argv[@]}" --port "$port" --dir "$work" --save "" --appendonly no --bind 127.0.0.1 \
      --io-threads "$t" >"$work/log" 2>&1 &
    pid=$!
    for _ in $(seq 500); do [[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && break; sleep 0.01; done
    redis-cli -p "$port" set key:__rand_int__ x >/dev/null
    read -r m0 o0 < <(split_ticks "$pid")
    rps=$(taskset -c "$CLIENT_CPUS" redis-benchmark -p "$port" -c 50 -n "$N" -r 100000 -P "$PIPELINE" -t "$w" --csv \
      2>/dev/null | grep -v '^"test"' | tail -1 | tr -d '"' | awk -F, '{print $2}')
    read -r m1 o1 < <(split_ticks "$pid")
    awk -v t="$t" -v w="$w" -v rps="$rps" -v m=$((m1 - m0)) -v o=$((o1 - o0)) -v hz="$hz" -v n="$N" \
      'BEGIN { printf "%-10s %-6s %10s %16.3f %18.3f %16.3f\n", t, w, rps, m/hz*1e6/n, o/hz*1e6/n, (m+o)/hz*1e6/n }'
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=""
  done
done
