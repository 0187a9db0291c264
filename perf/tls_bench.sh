#!/usr/bin/env bash
# TLS against plain TCP, side by side: for each server command, one server
# (CPU 1) with a plain port and a tls-port; redis-benchmark (CPU 0) runs SET
# and GET with 50 clients at pipeline 1 and 16, plain and --tls (client
# certificate, TLS 1.3 as negotiated by default). Reports requests per second
# and the server's CPU time per request (utime + stime from /proc, during the
# run only), and the machine's load: the machine is shared, so read the
# "busy" column (cores busy machine-wide during the run; our server and
# load generator account for up to 2).
#   perf/tls_bench.sh [-n REQUESTS] [-r ROUNDS] SERVER_CMD...
#   perf/tls_bench.sh -n 400000 -r 5 redis-server "build/ringkv-server"
# With -r, the servers take turns round by round (a fresh server each
# time), every run is printed, and a summary follows: per server, mode,
# pipeline and test, the median CPU per request over the rounds, its range,
# and its ratio to the first server's median.
set -euo pipefail
N=400000
ROUNDS=1
while getopts "n:r:" o; do case $o in n) N=$OPTARG ;; r) ROUNDS=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-n N] [-r ROUNDS] SERVER_CMD..." >&2; exit 2; }
work=$(mktemp -d /tmp/tlsbench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"
"$(dirname "$0")/../tests/tls/gen_test_certs.sh" "$work/certs" >/dev/null
C=$work/certs
SERVER_EXTRA=(--tls-cert-file "$C/redis.crt" --tls-key-file "$C/redis.key" --tls-ca-cert-file "$C/ca.crt")
TLS_CLIENT=(--tls --cacert "$C/ca.crt" --cert "$C/client.crt" --key "$C/client.key")
hz=$(getconf CLK_TCK)
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }
printf "# tls_bench.sh %s  requests=%d rounds=%d clients=50 loadavg=%s\n" "$(date -u +%FT%TZ)" "$N" "$ROUNDS" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-5s %-24s %-5s %3s %4s %10s %12s %6s\n" round server mode P test rps us_per_req busy
results=$work/results
for round in $(seq "$ROUNDS"); do
i=0
for cmd in "$@"; do
  i=$((i + 1))
  start_tls_server "$cmd" "$work/$i"
  for mode in plain tls; do
    for p in 1 16; do
      for t in set get; do
        if [[ $mode == tls ]]; then args=(-p "$tport" "${TLS_CLIENT[@]}"); else args=(-p "$port"); fi
        n=$N
        ((p == 1)) && n=$((N / 4))  # pipeline 1 is slower: fewer requests, same duration order
        t0=$(cpu_ticks "$pid")
        b0=$(busy_ticks)
        s0=$(date +%s.%N)
        rps=$(taskset -c 0 redis-benchmark "${args[@]}" -c 50 -n "$n" -r 100000 -P "$p" -t "$t" --csv 2>/dev/null |
          grep -v '^"test"' | tail -1 | tr -d '"' | awk -F, '{print $2}')
        s1=$(date +%s.%N)
        b1=$(busy_ticks)
        t1=$(cpu_ticks "$pid")
        us=$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$n" 'BEGIN { printf "%.3f", t / hz * 1e6 / n }')
        busy=$(awk -v b="$((b1 - b0))" -v hz="$hz" -v s0="$s0" -v s1="$s1" 'BEGIN { printf "%.2f", b / hz / (s1 - s0) }')
        printf "%-5s %-24s %-5s %3s %4s %10s %12s %6s\n" "$round" "$i:$(basename "${cmd%% *}")" "$mode" "$p" "$t" "$rps" "$us" "$busy" |
          tee -a "$results"
      done
    done
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pids=()
  sleep 0.5
done
done
# Medians over the rounds (the servers are numbered in the order given).
echo
printf "# medians over %d rounds: CPU us per request (range), and ratio to the median of server 1\n" "$ROUNDS"
printf "%-24s %-5s %3s %4s %10s %17s %8s\n" server mode P test median range ratio
sort -k2,2 -k3,3 -k4,4n -k5,5 "$results" | awk '
  function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { key = $2 " " $3 " " $4 " " $5; if (!(key in n)) order[++keys] = key; v[key, ++n[key]] = $7 }
  END {
    for (k = 1; k <= keys; k++) {
      key = order[k]; m = n[key]; delete a
      lo = hi = v[key, 1]
      for (i = 1; i <= m; i++) { a[i] = v[key, i]; if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
      med[key] = median(a, m); range[key] = sprintf("%.3f-%.3f", lo, hi)
    }
    for (k = 1; k <= keys; k++) {
      key = order[k]; split(key, f, " ")
      first = ""
      for (j = 1; j <= keys; j++) { split(order[j], g, " "); if (g[1] ~ /^1:/ && g[2] == f[2] && g[3] == f[3] && g[4] == f[4]) first = order[j] }
      ratio = (first != "" && med[first] > 0) ? sprintf("%.2f", med[key] / med[first]) : "-"
      printf "%-24s %-5s %3s %4s %10.3f %17s %8s\n", f[1], f[2], f[3], f[4], med[key], range[key], ratio
    }
  }'
