#!/usr/bin/env bash
# Many small streams side by side: the case perf/streams_memory.sh's one
# large stream does not show (per-stream and per-node costs dominate, and a
# stream's sealed nodes are spread over many streams). For each server: a
# fresh server on CPU 1, 1 s to settle, then STREAMS streams of PER_STREAM
# entries each (perf/streams_fill.py's entries, entry i to key s:<i % STREAMS>)
# through redis-cli --pipe; prints the growth of VmRSS and of INFO used_memory,
# per entry, and the RSS growth's ratio to the first server's.
#   perf/streams_memory_many.sh SERVER_CMD [SERVER_CMD...]
#   e.g. perf/streams_memory_many.sh redis-server build/ringkv-server
# Env: STREAMS (10000), PER_STREAM (150).
set -euo pipefail
(($# >= 1)) || { echo "usage: $0 SERVER_CMD..." >&2; exit 2; }
STREAMS=${STREAMS:-10000}
PER_STREAM=${PER_STREAM:-150}
entries=$((STREAMS * PER_STREAM))
work=$(mktemp -d /tmp/streams-mem-many.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"

python3 "$(dirname "$0")/streams_fill.py" "$entries" "$STREAMS" >"$work/fill.resp"

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

printf "# streams_memory_many.sh %s STREAMS=%d PER_STREAM=%d load %s\n" "$(date -u +%FT%TZ)" "$STREAMS" "$PER_STREAM" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "| server | RSS growth MiB | RSS B/entry | used_memory growth MiB | used_memory B/entry | RSS growth / first |\n"
printf "|---|---|---|---|---|---|\n"
i=0
first=""
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
  [[ -n $first ]] || first=$((r1 - r0))
  printf "| %s | %.1f | %.1f | %.1f | %.1f | %.3f |\n" "$server" "$(awk -v a="$r0" -v b="$r1" 'BEGIN { print (b - a) / 1024 }')" \
    "$(awk -v a="$r0" -v b="$r1" -v n="$entries" 'BEGIN { print (b - a) * 1024 / n }')" \
    "$(awk -v a="$u0" -v b="$u1" 'BEGIN { print (b - a) / 1048576 }')" \
    "$(awk -v a="$u0" -v b="$u1" -v n="$entries" 'BEGIN { print (b - a) / n }')" \
    "$(awk -v a="$r0" -v b="$r1" -v f="$first" 'BEGIN { print (b - a) / f }')"
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$spid" 2>/dev/null || true
done
