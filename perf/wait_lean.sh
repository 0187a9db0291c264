#!/usr/bin/env bash
# Issue 24's WAIT row, side by side, with a load generator that is not the
# limit: perf/lean_load keeps C clients sending `WAIT 10 1` (no replicas:
# every WAIT times out after 1 ms) for N requests against each server in
# turn, round by round, each run on a fresh server (CPU 1; lean_load on
# CPU 0). Per run: requests/s and latency p50 / p99 from lean_load, the
# server's CPU per request (utime + stime from /proc over the run, 10 ms
# ticks), and, for a server that answers DEBUG DEADLINE-LATENESS (ringkv),
# how late its deadlines fired at p99 / p999 (µs, measured in the server).
# A summary gives each server's medians and the ratio of its rps to the
# first server's, then each other server paired with the first round by
# round: the rounds it made more rps in, and the median of its per-round
# CPU-per-request ratios.
#   perf/wait_lean.sh [-c CLIENTS] [-n REQUESTS] [-r ROUNDS] SERVER_CMD [SERVER_CMD...]
#   e.g. cmake --build build --target lean_load &&
#        perf/wait_lean.sh -c 2000 -r 3 /usr/bin/redis-server /tmp/old-server build/ringkv-server
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=2000
REQUESTS=300000
ROUNDS=3
while getopts "c:n:r:" opt; do
  case $opt in
    c) CLIENTS=$OPTARG ;;
    n) REQUESTS=$OPTARG ;;
    r) ROUNDS=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($# >= 1)) || { sed -n 14,16p "$0" >&2; exit 2; }
LEAN_LOAD=${LEAN_LOAD:-build/perf/lean_load}
[[ -x $LEAN_LOAD ]] || { echo "build lean_load first: cmake --build build --target lean_load" >&2; exit 1; }
TICK=$(getconf CLK_TCK)
pids=()
# shellcheck source=servers.sh
source perf/servers.sh
work=$(mktemp -d)
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# p99 and p999 of DEBUG DEADLINE-LATENESS, or "- -" where the server has none.
lateness() {
  redis-cli -p "$1" debug deadline-lateness 2>/dev/null | awk '
    prev == "p99_usec" { p99 = $0 } prev == "p999_usec" { p999 = $0 } { prev = $0 }
    END { if (p99 == "") print "- -"; else print p99, p999 }'
}

printf "# wait_lean.sh %s clients=%d requests=%d rounds=%d load %s\n" "$(date -u +%FT%TZ)" "$CLIENTS" "$REQUESTS" \
  "$ROUNDS" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-6s %-40s %10s %8s %8s %10s %9s %9s\n" round server rps p50_ms p99_ms cpu_us/req late_p99 late_p999
for round in $(seq "$ROUNDS"); do
  for cmd in "$@"; do
    port=$(free_port)
    start_server "$cmd" "$work/server" "$port" --maxclients $((CLIENTS + 64)) --enable-debug-command yes
    pid=${pids[-1]}
    t0=$(cpu_ticks "$pid")
    out=$(taskset -c 0 "$LEAN_LOAD" -p "$port" -c "$CLIENTS" -n "$REQUESTS" wait 10 1 | tail -1)
    t1=$(cpu_ticks "$pid")
    read -r late99 late999 < <(lateness "$port")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    # lean_load's CSV: "test","rps","p50_ms","p99_ms","client_cpu_util","errors"
    IFS=, read -r _ rps p50 p99 _ _ <<<"${out//\"/}"
    cpu=$(awk -v t="$((t1 - t0))" -v hz="$TICK" -v n="$REQUESTS" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
    printf "%-6s %-40s %10.0f %8s %8s %10s %9s %9s\n" "$round" "$cmd" "$rps" "$p50" "$p99" "$cpu" "$late99" "$late999" |
      tee -a "$work/runs"
  done
done
echo "# medians over the rounds; rps ratio to the first server"
awk '
  { key = $2; n[key]++; order[key] = order[key] ? order[key] : ++seen
    rps[key, n[key]] = $3; p99[key, n[key]] = $5; cpu[key, n[key]] = $6; late[key, n[key]] = $7 }
  function median(arr, key, count,   v, i, j, t) {
    for (i = 1; i <= count; i++) v[i] = arr[key, i]
    for (i = 1; i <= count; i++) for (j = i + 1; j <= count; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
    return v[int((count + 1) / 2)]
  }
  END {
    for (key in order) byorder[order[key]] = key
    for (k = 1; k <= seen; k++) {
      key = byorder[k]; m = median(rps, key, n[key]); if (k == 1) first = m
      printf "%-47s %10.0f %8s %8s %10s %9s   %.2fx\n", key, m, "", median(p99, key, n[key]), median(cpu, key, n[key]),
        median(late, key, n[key]), m / first
    }
    # Paired by round against the first server: a change of a few per cent
    # hides in rounds that spread by 15% (docs/performance.md 39.1), and shows
    # (or not) in how often it won and by how much, round by round.
    base = byorder[1]
    for (k = 2; k <= seen; k++) {
      key = byorder[k]; won = 0; pairs = 0
      for (i = 1; i <= n[key] && i <= n[base]; i++) {
        pairs++
        if (rps[key, i] + 0 > rps[base, i] + 0) won++
        ratio[key, i] = (cpu[base, i] + 0 > 0) ? cpu[key, i] / cpu[base, i] : 0
      }
      printf "# %s against %s: more rps in %d of %d rounds; CPU per request, median of the per-round ratios %.3f\n",
        key, base, won, pairs, median(ratio, key, pairs)
    }
  }' "$work/runs"
