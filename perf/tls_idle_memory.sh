#!/usr/bin/env bash
# Usage: perf/tls_idle_memory.sh [-n CONNECTIONS] SERVER_CMD...
#
# RSS per idle TLS connection (issue 23; docs/performance.md 31.2): for each
# server, a fresh one with a plain port and a tls-port (perf/servers.sh,
# the throw-away PKI of tests/tls/gen_test_certs.sh); N clients (Python's
# ssl, client certificate, TLS 1.3 as negotiated) each complete the
# handshake, send one PING, read +PONG and stay open; the server's VmRSS
# before and 2 s after, divided by N.
set -euo pipefail
N=500
while getopts "n:" o; do case $o in n) N=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-n CONNECTIONS] SERVER_CMD..." >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=servers.sh
source "$HERE/servers.sh"
# shellcheck disable=SC2034  # both are read by servers.sh's functions
pids=()
work=$(mktemp -d /tmp/tls_idle.XXXXXX)
client=
trap 'kill $client 2>/dev/null || true; stop_servers; rm -rf "$work"' EXIT
"$HERE/../tests/tls/gen_test_certs.sh" "$work/certs" >/dev/null
C=$work/certs
# shellcheck disable=SC2034
SERVER_EXTRA=(--maxclients 10000 --tls-cert-file "$C/redis.crt" --tls-key-file "$C/redis.key"
              --tls-ca-cert-file "$C/ca.crt")
cat >"$work/clients.py" <<'PY'
import socket, ssl, sys, time
port, n, certs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context(cafile=certs + "/ca.crt")
ctx.load_cert_chain(certs + "/client.crt", certs + "/client.key")
ctx.check_hostname = False
conns = []
for _ in range(n):
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
    s.sendall(b"PING\r\n")
    assert s.recv(16) == b"+PONG\r\n"
    conns.append(s)
print("ready", flush=True)
time.sleep(3600)
PY
printf "%-24s %12s %8s %8s %12s\n" server connections rss0_kB rss1_kB rss_B/conn
i=0
for cmd in "$@"; do
  i=$((i + 1))
  start_tls_server "$cmd" "$work/$i"
  rss0=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  python3 "$work/clients.py" "$tport" "$N" "$C" >"$work/clients.$i" 2>&1 &
  client=$!
  for _ in $(seq 600); do grep -q ready "$work/clients.$i" && break; sleep 0.1; done
  grep -q ready "$work/clients.$i" || { cat "$work/clients.$i" >&2; exit 1; }
  sleep 2
  n=$(redis-cli -p "$port" info clients | tr -d '\r' | awk -F: '$1 == "connected_clients" {print $2 - 1}')
  rss1=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  printf "%-24s %12s %8s %8s %12s\n" "$(basename "${cmd%% *}")" "$n" "$rss0" "$rss1" $(((rss1 - rss0) * 1024 / N))
  kill "$client" 2>/dev/null || true
  wait "$client" 2>/dev/null || true
  stop_servers
done
