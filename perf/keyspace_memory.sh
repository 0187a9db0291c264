#!/usr/bin/env bash
# Memory for N keys, side by side: each server is started on a free loopback
# port, loaded with N keys through redis-cli --pipe, and its RSS and INFO
# used_memory are read before and after. Prints bytes per key and the ratio to
# the first server.
#   perf/keyspace_memory.sh [-n N] SERVER_CMD [SERVER_CMD...]
#   e.g. perf/keyspace_memory.sh "redis-server" "build/ringkv-server"
# Keys are "key:%012d" (16 bytes). Value kinds: str32 (32-byte strings) and
# int (integers); KINDS="str32 int str32ttl" adds str32ttl (32-byte strings,
# each with a TTL: SET ... EX 1000000). Servers get: --port P --save ""
# --appendonly no --bind 127.0.0.1
set -euo pipefail
N=1000000
while getopts "n:" o; do case $o in n) N=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-n N] SERVER_CMD..." >&2; exit 2; }
tmp=$(mktemp -d /tmp/kvmem.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

gen() {  # kind -> RESP file
  python3 - "$N" "$1" >"$tmp/$1.resp" <<'PY'
import sys
n, kind = int(sys.argv[1]), sys.argv[2]
out = sys.stdout.buffer
val32 = b"v" * 32
buf = []
for i in range(n):
    k = b"key:%012d" % i
    v = val32 if kind.startswith("str32") else str(i * 7919 % 1000000007).encode()
    if kind == "str32ttl":
        buf.append(b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nEX\r\n$7\r\n1000000\r\n" % (len(k), k, len(v), v))
    else:
        buf.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
    if len(buf) == 10000:
        out.write(b"".join(buf)); buf = []
out.write(b"".join(buf))
PY
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
used() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" {print $2}'; }

printf "# keyspace_memory.sh %s  N=%d  keys key:%%012d (16 B)\n" "$(date -u +%FT%TZ)" "$N"
printf "%-8s %-40s %12s %12s %14s %14s\n" kind server rss_MiB "rss_B/key" "used_B/key" "ratio_rss"
for kind in ${KINDS:-str32 int}; do
  gen "$kind"
  base=""
  for cmd in "$@"; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    eval "argv=($cmd)"
    "${argv[@]}" --port "$port" --save "" --appendonly no --bind 127.0.0.1 >"$tmp/server.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
    r0=$(rss_kb "$pid"); u0=$(used "$port")
    redis-cli -p "$port" --pipe <"$tmp/$kind.resp" >/dev/null
    sleep 1
    keys=$(redis-cli -p "$port" dbsize)
    [[ $keys == "$N" ]] || { echo "error: $cmd holds $keys keys, expected $N" >&2; exit 1; }
    r1=$(rss_kb "$pid"); u1=$(used "$port")
    per=$(( (r1 - r0) * 1024 / N ))
    [[ -n $base ]] || base=$per
    printf "%-8s %-40s %12s %12d %14d %14s\n" "$kind" "$cmd" "$(awk -v r="$r1" 'BEGIN {printf "%.1f", r / 1024}')" "$per" \
      $(( (u1 - u0) / N )) "$(awk -v a="$per" -v b="$base" 'BEGIN {printf "%.3f", a / b}')"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
