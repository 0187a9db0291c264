#!/usr/bin/env bash
# Stream memory side by side (issue 21: RSS for 1,000,000 entries of 3
# fields at most redis-server's). For each server: a fresh server on CPU 1,
# 1 s to settle, then 1,000,000 `XADD s * sensor <i % 1000> temperature
# <2 digits> humidity <2 digits>` (pseudo-random, the same for every server)
# through redis-cli --pipe; prints the growth of VmRSS and of INFO
# used_memory, per entry, and MEMORY USAGE s, XINFO STREAM's
# radix-tree-keys / radix-tree-nodes, with the ratio to the first server.
# Then a consumer group reads 100,000 of the entries (pending) and the
# growth of used_memory and MEMORY USAGE is printed again (the growth
# includes what the first big reply leaves behind, such as ringkv's reply
# chunk pool), and what XGROUP DESTROY frees then: the PEL alone.
#   perf/streams_memory.sh SERVER_CMD [SERVER_CMD...]
#   e.g. perf/streams_memory.sh redis-server build/ringkv-server
# Env: ENTRIES (1000000).
set -euo pipefail
(($# >= 1)) || { echo "usage: $0 SERVER_CMD..." >&2; exit 2; }
ENTRIES=${ENTRIES:-1000000}
work=$(mktemp -d /tmp/streams-mem.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"

python3 "$(dirname "$0")/streams_fill.py" "$ENTRIES" >"$work/fill.resp"

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
xinfo() { redis-cli -p "$1" xinfo stream s | awk -v f="$2" 'prev == f {print; exit} {prev = $0}'; }

printf "# streams_memory.sh %s ENTRIES=%d load %s\n" "$(date -u +%FT%TZ)" "$ENTRIES" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "| server | RSS growth MiB | RSS B/entry | used_memory B/entry | MEMORY USAGE s | radix-tree-keys | radix-tree-nodes | used_memory growth with 100,000 pending B | MEMORY USAGE with them | PEL B (freed by XGROUP DESTROY) |\n"
printf "|---|---|---|---|---|---|---|---|---|---|\n"
i=0
for server in "$@"; do
  i=$((i + 1))
  port=$(free_port)
  start_server "$server" "$work/s$i" "$port"
  spid=${pids[-1]}
  sleep 1
  r0=$(rss_kb "$spid")
  u0=$(used_memory "$port")
  pipe_and_settle "$port" "$work/fill.resp"
  r1=$(rss_kb "$spid")
  u1=$(used_memory "$port")
  mu=$(redis-cli -p "$port" memory usage s)
  keys=$(xinfo "$port" radix-tree-keys)
  nodes=$(xinfo "$port" radix-tree-nodes)
  redis-cli -p "$port" xgroup create s g 0 >/dev/null
  redis-cli -p "$port" xreadgroup group g alice count 100000 streams s '>' >/dev/null
  u2=$(used_memory "$port")
  mu2=$(redis-cli -p "$port" memory usage s)
  redis-cli -p "$port" xgroup destroy s g >/dev/null
  u3=$(used_memory "$port")
  printf "| %s | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s | %s |\n" "$server" "$(awk -v a="$r0" -v b="$r1" 'BEGIN { print (b - a) / 1024 }')" \
    "$(awk -v a="$r0" -v b="$r1" -v n="$ENTRIES" 'BEGIN { print (b - a) * 1024 / n }')" \
    "$(awk -v a="$u0" -v b="$u1" -v n="$ENTRIES" 'BEGIN { print (b - a) / n }')" "$mu" "$keys" "$nodes" \
    "$((u2 - u1))" "$mu2" "$((u2 - u3))"
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$spid" 2>/dev/null || true
done
