#!/usr/bin/env bash
# How late blocked clients' deadlines fire, measured in the server (issue 24:
# p99 within 1 ms). For each ringkv binary and I/O backend: a fresh server on
# CPU 1, then
#   idle: one redis-cli sends 300 x (WAIT 1 1, BLPOP none 0.001) in sequence;
#   load: perf/lean_load on CPU 0 keeps C clients sending WAIT 10 1 (no
#         replicas: every WAIT times out after 10 ms) for N requests;
# after each, DEBUG DEADLINE-LATENESS (calls, p50/p99/p999/max in µs) and
# lean_load's own rps and latency. redis-server has no such counter; compare
# it from outside with ../shared/bench/wait-heavy.sh.
#   perf/deadline_lateness.sh [-c CLIENTS] [-n REQUESTS] [-b "io_uring epoll"] BINARY [BINARY...]
#   e.g. cmake --build build --target lean_load && perf/deadline_lateness.sh /tmp/ringkv-old build/ringkv-server
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=2000
REQUESTS=300000
BACKENDS="io_uring epoll"
while getopts "c:n:b:" opt; do
  case $opt in
    c) CLIENTS=$OPTARG ;;
    n) REQUESTS=$OPTARG ;;
    b) BACKENDS=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -ge 1 ]] || { sed -n 2,12p "$0"; exit 2; }
LEAN_LOAD=${LEAN_LOAD:-build/perf/lean_load}
[[ -x $LEAN_LOAD ]] || { echo "build lean_load first: cmake --build build --target lean_load" >&2; exit 1; }

pids=()
source perf/servers.sh
work=$(mktemp -d)
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The four numbers of DEBUG DEADLINE-LATENESS's map: "calls p50 p99 p999 max".
lateness() {
  redis-cli -p "$1" debug deadline-lateness | awk '
    prev ~ /^(calls|p50_usec|p99_usec|p999_usec|max_usec)$/ { v[prev] = $0 }
    { prev = $0 }
    END { printf "%s | %s | %s | %s | %s", v["calls"], v["p50_usec"], v["p99_usec"], v["p999_usec"], v["max_usec"] }'
}

printf "# deadline_lateness.sh %s clients=%d requests=%d load %s\n" "$(date -u +%FT%TZ)" "$CLIENTS" "$REQUESTS" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "| binary | backend | phase | calls | p50 µs | p99 µs | p999 µs | max µs | lean_load |\n"
printf "|---|---|---|---|---|---|---|---|---|\n"
i=0
for bin in "$@"; do
  for backend in $BACKENDS; do
    i=$((i + 1))
    port=$(free_port)
    start_server "$bin" "$work/s$i" "$port" --io-backend "$backend" --maxclients $((CLIENTS + 64)) \
      --enable-debug-command yes
    spid=${pids[-1]}
    for _ in $(seq 300); do printf 'WAIT 1 1\nBLPOP none 0.001\n'; done | redis-cli -p "$port" >/dev/null
    printf "| %s | %s | idle | %s | |\n" "$bin" "$backend" "$(lateness "$port")"
    redis-cli -p "$port" debug deadline-lateness reset >/dev/null
    out=$(taskset -c 0 "$LEAN_LOAD" -p "$port" -c "$CLIENTS" -n "$REQUESTS" wait 10 1 2>&1 | tail -1)
    printf "| %s | %s | load | %s | %s |\n" "$bin" "$backend" "$(lateness "$port")" "$out"
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    wait "$spid" 2>/dev/null || true
  done
done
