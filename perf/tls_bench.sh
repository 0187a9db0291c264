#!/usr/bin/env bash
# TLS against plain TCP, side by side: for each server command, one server
# (CPU 1) with a plain port and a tls-port; redis-benchmark (CPU 0) runs SET
# and GET with 50 clients at pipeline 1 and 16, plain and --tls (client
# certificate, TLS 1.3 as negotiated by default). Reports requests per second
# and the server's CPU time per request (utime + stime from /proc, during the
# run only), and the machine's load: the machine is shared, so read the
# "busy" column (cores busy machine-wide during the run; our server and
# load generator account for up to 2).
#   perf/tls_bench.sh [-n REQUESTS] SERVER_CMD...
#   perf/tls_bench.sh -n 400000 redis-server "build/ringkv-server"
set -euo pipefail
N=400000
while getopts "n:" o; do case $o in n) N=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-n N] SERVER_CMD..." >&2; exit 2; }
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
printf "# tls_bench.sh %s  requests=%d clients=50 loadavg=%s\n" "$(date -u +%FT%TZ)" "$N" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-24s %-5s %3s %4s %10s %12s %6s\n" server mode P test rps us_per_req busy
i=0
for cmd in "$@"; do
  i=$((i + 1))
  port=$(free_port)
  tport=$(free_port)
  start_server "$cmd" "$work/$i" "$port" --tls-port "$tport"
  pid=${pids[-1]}
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
        printf "%-24s %-5s %3s %4s %10s %12s %6s\n" "$(basename "${cmd%% *}")" "$mode" "$p" "$t" "$rps" "$us" "$busy"
      done
    done
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pids=()
  sleep 0.5
done
