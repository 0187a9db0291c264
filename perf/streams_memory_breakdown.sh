#!/usr/bin/env bash
# What the RSS growth of perf/streams_memory.sh consists of (issue 21). For
# each server: the same fresh server and the same 1,000,000-entry fill, then
#   - the RSS growth split into anonymous memory (the heap) and file-backed
#     pages (code of the binary and its libraries touched for the first time,
#     from /proc/PID/smaps_rollup),
#   - the used_memory growth,
#   - the stream's nodes as an RDB file stores them (SAVE with rdbcompression
#     off, parsed here): their count and exact listpack bytes, and the bytes
#     they take in allocator size classes (four per power of two above 64
#     bytes: mimalloc's bins and jemalloc's classes alike) when each node's
#     capacity is ringkv's PackedBuffer::RoundUp of its size, and when each
#     node is shrunk to its exact size (what a shrink-to-fit on sealing a
#     node would give),
#   - what the nodes' classes leave unused at the end of mimalloc's 64 KiB
#     pages (a page holds floor(65536 / class) blocks; jemalloc's slabs for
#     these classes hold a whole number of them),
#   - the rest of used_memory's growth (the index of nodes and what else the
#     fill left allocated).
# A diagnosis, not a benchmark: perf/streams_memory.sh is the measurement.
#   perf/streams_memory_breakdown.sh SERVER_CMD [SERVER_CMD...]
# Env: ENTRIES (1000000).
set -euo pipefail
(($# >= 1)) || { echo "usage: $0 SERVER_CMD..." >&2; exit 2; }
ENTRIES=${ENTRIES:-1000000}
work=$(mktemp -d /tmp/streams-mem-bd.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"

python3 "$(dirname "$0")/streams_fill.py" "$ENTRIES" >"$work/fill.resp"

# nodes.py RDB: "nodes exact_bytes class_bytes page_tail_bytes classes" for the
# stream key of an uncompressed RDB file holding only it.
cat >"$work/nodes.py" <<'PY'
import collections, sys
d = open(sys.argv[1], 'rb').read()
i = 9
def rlen():
    global i
    b = d[i]; t = b >> 6
    if t == 0: i += 1; return b & 0x3f, False
    if t == 1: v = ((b & 0x3f) << 8) | d[i + 1]; i += 2; return v, False
    if t == 2:
        n = 4 if b == 0x80 else 8
        v = int.from_bytes(d[i + 1:i + 1 + n], 'big'); i += 1 + n; return v, False
    i += 1; return b & 0x3f, True
def rstr():
    global i
    n, enc = rlen()
    if enc:
        if n > 2: raise SystemExit('compressed string: SAVE with rdbcompression no')
        i += (1, 2, 4)[n]; return b''
    s = d[i:i + n]; i += n; return s
while d[i] in (0xFA, 0xFE, 0xFB):
    op = d[i]; i += 1
    if op == 0xFA: rstr(); rstr()
    elif op == 0xFE: rlen()
    else: rlen(); rlen()
i += 1  # the value type (a stream)
rstr()  # the key
count, _ = rlen()
sizes = []
for _ in range(count):
    rstr()
    sizes.append(len(rstr()))
def steps(n, per_power):  # n rounded up to one of `per_power` steps per power of two (above 64)
    if n <= 64: return (n + 7) & ~7
    step = 1 << ((n - 1).bit_length() - 1 - per_power.bit_length() + 1)
    return (n + step - 1) & ~(step - 1)
classes = collections.Counter(steps(steps(s, 8), 4) for s in sizes)
exact_classes = sum(steps(s, 4) for s in sizes)  # the same nodes shrunk to their exact size
class_bytes = sum(c * k for c, k in classes.items())
tail = sum(-(-k // (65536 // c)) * (65536 % c) for c, k in classes.items())
print(count, sum(sizes), class_bytes, exact_classes, tail, ' '.join('%d:%d' % ck for ck in sorted(classes.items())))
PY

kb() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/smaps_rollup"; }

printf "| server | RSS growth KiB | anonymous KiB | file-backed KiB | used_memory growth KiB | nodes | exact listpack KiB | in size classes KiB | shrunk to exact size, in classes KiB | classes (bytes:nodes) | mimalloc page tails KiB | rest of used_memory KiB | anonymous - used_memory KiB |\n"
printf "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
i=0
for server in "$@"; do
  i=$((i + 1))
  port=$(free_port)
  start_server "$server" "$work/s$i" "$port"
  spid=${pids[-1]}
  sleep 1
  r0=$(kb "$spid" Rss); a0=$(kb "$spid" Anonymous)
  u0=$(used_memory "$port")
  pipe_and_settle "$port" "$work/fill.resp"
  r1=$(kb "$spid" Rss); a1=$(kb "$spid" Anonymous)
  u1=$(used_memory "$port")
  redis-cli -p "$port" config set rdbcompression no >/dev/null
  redis-cli -p "$port" save >/dev/null
  read -r n exact cls xcls tail dist < <(python3 "$work/nodes.py" "$work/s$i/dump.rdb")
  ug=$(((u1 - u0) / 1024))
  printf "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %s | %d | %d | %d |\n" "$server" $((r1 - r0)) $((a1 - a0)) \
    $(((r1 - r0) - (a1 - a0))) "$ug" "$n" $((exact / 1024)) $((cls / 1024)) $((xcls / 1024)) "$dist" $((tail / 1024)) \
    $(((u1 - u0 - cls) / 1024)) $(((a1 - a0) - ug))
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$spid" 2>/dev/null || true
done
