#!/usr/bin/env bash
# Server CPU per request at nanosecond resolution: `perf stat -e task-clock`
# attached to the server for the whole redis-benchmark run, divided by the
# requests. ../shared/bench/throughput.sh reads utime + stime from /proc,
# in 10 ms ticks; this is the finer figure for P1 comparisons against the
# floor, where the servers differ by a few percent.
#   perf/cpu_per_request.sh ROUNDS N "REDIS-BENCHMARK TEST ARGS" SERVER...
#   perf/cpu_per_request.sh 5 200000 "-t ping_mbulk" /tmp/bench/uring_pong redis-server build/ringkv-server
# Each server (CPU 1) is started fresh per run by perf/servers.sh's
# start_server, without persistence (the floor servers of ../shared/bench/floor
# take --port and ignore the rest); redis-benchmark -c 50 runs on CPU 0. For a GET test the
# keys are written first (SET, 100,000 keys, 64 bytes). The window includes
# 0.2 s of the idle server before the run. Every run is printed, then the
# median and the minimum per server, and, for each server after the first,
# the rounds paired with the first's: in how many it was cheaper, and the
# median of its per-round ratio to the first (the machine's drift between
# rounds moves both servers of a round alike).
# EVENTS=1 adds, under each run, the kernel events per request: context
# switches, io_uring_enter calls (loop turns) and kernel timers started and
# cancelled.
set -euo pipefail
(($# >= 4)) || { sed -n '7,8p' "$0" >&2; exit 2; }
ROUNDS=$1 N=$2 TEST=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pids=()
# shellcheck source=servers.sh
source "$(dirname "$0")/servers.sh"
events=task-clock
[[ -z ${EVENTS:-} ]] || events+=,context-switches,syscalls:sys_enter_io_uring_enter,timer:hrtimer_start,timer:hrtimer_cancel
printf "# cpu_per_request.sh %s  rounds=%d N=%d test=%s\n" "$(date -u +%FT%TZ)" "$ROUNDS" "$N" "$TEST"
for round in $(seq "$ROUNDS"); do
  for server in "$@"; do
    start_pinned "$server" "$work/server"
    preload_for_get "$port" "$TEST"
    bench_with_perf "$N" "$TEST" stat -x, -e "$events" -o "$work/stat"
    stop_pinned
    ms=$(awk -F, '/task-clock/ {print $1}' "$work/stat")
    us=$(echo "$ms * 1000 / $N" | bc -l)
    printf "%d %-40s rps %10s  cpu_us/req %.3f\n" "$round" "$server" "$rps" "$us"
    # Tab-separated for the summaries: a server may be a command with arguments.
    printf "%d\t%s\t%.3f\n" "$round" "$server" "$us" >>"$work/runs"
    if [[ -n ${EVENTS:-} ]]; then
      awk -F, -v n="$N" '!/task-clock/ && $3 != "" { sub(/^.*:/, "", $3); printf "  %s %.3f", $3, $1 / n }
        END { print "  (per request)" }' "$work/stat"
    fi
  done
done
echo "# per server: median and minimum of cpu_us/req over the rounds"
for server in "$@"; do
  awk -F'\t' -v s="$server" '$2 == s {print $3}' "$work/runs" | sort -n |
    awk -v s="$server" '{ a[++m] = $1 }
      END { printf "%-40s median %.3f  min %.3f\n", s, (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2), a[1] }'
done
first=$1
for server in "${@:2}"; do
  awk -F'\t' -v a="$first" -v b="$server" '$2 == a {x[$1] = $3} $2 == b {y[$1] = $3}
    END {
      n = 0; w = 0
      for (r in x) if (r in y) { q[++n] = y[r] / x[r]; if (y[r] < x[r]) ++w }
      for (i = 2; i <= n; ++i) { v = q[i]; for (j = i - 1; j >= 1 && q[j] > v; --j) q[j + 1] = q[j]; q[j + 1] = v }
      if (n > 0) printf "%-40s cheaper than %s in %d of %d rounds, median ratio %.3f\n", b, a, w, n,
        (n % 2 ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2)
    }' "$work/runs"
done
