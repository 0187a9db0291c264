#!/usr/bin/env bash
# Usage: perf/callgrind_publish.sh BINARY SUBSCRIBERS [N]  -> user-space instructions per PUBLISH
# The server's callgrind Ir per PUBLISH delivered to SUBSCRIBERS clients of
# one channel (`ch`, 16-byte messages), as perf/callgrind_requests.sh counts
# (no hardware counters on this VM): the server runs under valgrind with
# instrumentation off; one process keeps the subscribers connected and
# reads what they get; after a 2,000-PUBLISH warm-up instrumentation is
# switched on for redis-benchmark -c 1 -P 16 -n N PUBLISH, then off; Ir / N
# is printed, with the receivers the last PUBLISH counted.
set -euo pipefail
BIN=$1 S=$2 N=${3:-10000}
OUT=${CG_DIR:-/tmp}/callgrind.publish$S.$$
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT" "$BIN" --port "$PORT" --save "" --appendonly no >/dev/null 2>&1 &
SPID=$!
SUBPID=
trap 'kill "$SPID" 2>/dev/null || true; [ -n "$SUBPID" ] && kill "$SUBPID" 2>/dev/null || true' EXIT
for _ in $(seq 300); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
python3 - "$PORT" "$S" <<'EOF' &
import selectors, socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
sel = selectors.DefaultSelector()
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n")
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
while True:
    for key, _ in sel.select():
        if not key.fileobj.recv(1 << 16):
            sys.exit(0)
EOF
SUBPID=$!
for _ in $(seq 300); do
  [ "$(redis-cli -p "$PORT" pubsub numsub ch | tail -1)" = "$S" ] && break
  sleep 0.2
done
redis-benchmark -p "$PORT" -c 1 -P 16 -n 2000 -q publish ch 0123456789abcdef >/dev/null
callgrind_control -i on "$SPID" >/dev/null 2>&1
redis-benchmark -p "$PORT" -c 1 -P 16 -n "$N" -q publish ch 0123456789abcdef >/dev/null
callgrind_control -i off "$SPID" >/dev/null 2>&1
receivers=$(redis-cli -p "$PORT" publish ch last)
kill "$SUBPID"
kill "$SPID"; wait "$SPID" || true
trap - EXIT
# (awk reads to the end: an early exit would fail the pipeline under pipefail)
ir=$(callgrind_annotate "$OUT" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}')
echo "PUBLISH_$S $(basename "$BIN") Ir/publish=$((ir / N)) receivers=$receivers out=$OUT"
