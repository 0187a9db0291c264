#!/usr/bin/env bash
# User-space instructions per TLS request, under callgrind: a count that
# does not move with the machine's load, for changes too small for
# perf/tls_bench.sh's CPU time to show (its rounds spread by 10-30%).
#   perf/tls_callgrind.sh [-t get|set] [-a N1] [-b N2] SERVER...
#   perf/tls_callgrind.sh /tmp/before-server build/ringkv-server
# For each server, two runs under `valgrind --tool=callgrind`, each a fresh
# server with a TLS port: redis-benchmark --tls -c 50 -P 16 runs N1, then N2
# requests of the test (GET of one key, or SET). What the two runs share
# (start-up, 50 handshakes, shutdown) cancels out of
#   (Ir(N2) - Ir(N1)) / (N2 - N1)
# which is printed per server. The kernel's share (about a third of the
# CPU under TLS P16, docs/performance.md 34.2) is not counted.
set -euo pipefail
TEST=get N1=20000 N2=60000
while getopts "t:a:b:" o; do case $o in t) TEST=$OPTARG ;; a) N1=$OPTARG ;; b) N2=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { sed -n '5,6p' "$0" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
work=$(mktemp -d /tmp/tlscg.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$(dirname "$0")/../tests/tls/gen_test_certs.sh" "$work/certs" >/dev/null
C=$work/certs
TLS=(--tls --cacert "$C/ca.crt" --cert "$C/client.crt" --key "$C/client.key")
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# instructions SERVER N: the Ir total of one run of N requests.
instructions() {
  local port tls_port pid out=$work/callgrind.out
  port=$(free_port) tls_port=$(free_port)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$1" --port "$port" --tls-port "$tls_port" \
    --save "" --appendonly no --tls-cert-file "$C/redis.crt" --tls-key-file "$C/redis.key" \
    --tls-ca-cert-file "$C/ca.crt" >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 150); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
  redis-cli -p "$port" set key:000000000042 v >/dev/null
  redis-benchmark -p "$tls_port" "${TLS[@]}" -t "$TEST" -c 50 -P 16 -n "$2" -q >/dev/null 2>&1
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$pid" || true
  awk '/^(summary|totals):/ {print $2; exit}' "$out"
}
printf "# tls_callgrind.sh %s  test=%s P=16 c=50 N1=%d N2=%d\n" "$(date -u +%FT%TZ)" "$TEST" "$N1" "$N2"
for server in "$@"; do
  a=$(instructions "$server" "$N1")
  b=$(instructions "$server" "$N2")
  printf "%-40s %8d Ir/request\n" "$server" $(((b - a) / (N2 - N1)))
done
