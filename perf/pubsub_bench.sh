#!/usr/bin/env bash
# PUBLISH fan-out side by side: for each server command, the server on CPU 1
# and build/perf/pubsub_bench on CPU 0 with 100 and 1,000 subscribers.
#   perf/pubsub_bench.sh SERVER_CMD...
set -euo pipefail
BENCH=${PUBSUB_BENCH:-build/perf/pubsub_bench}
(($# >= 1)) || { echo "usage: $0 SERVER_CMD..." >&2; exit 2; }
work=$(mktemp -d /tmp/pubsub-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"
SERVER_EXTRA=(--maxclients 4096)
printf "# pubsub_bench.sh %s\n" "$(date -u +%FT%TZ)"
i=0
for cmd in "$@"; do
  i=$((i + 1))
  port=$(free_port)
  start_server "$cmd" "$work/$i" "$port"
  spid=${pids[-1]}
  for spec in "100 200000" "1000 20000"; do
    read -r subs msgs <<<"$spec"
    t0=$(cpu_ticks "$spid")
    line=$(taskset -c 0 "$BENCH" -p "$port" -s "$subs" -c 20 -n "$msgs" -d 16)
    t1=$(cpu_ticks "$spid")
    # Server CPU per delivered message (includes accepting the subscribers).
    ns=$(awk -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v d="$((subs * msgs))" \
      'BEGIN { printf "%.1f", t / hz * 1e9 / d }')
    printf "%-28s %s server_ns_per_delivery=%s\n" "$cmd" "$line" "$ns"
  done
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  sleep 0.3
done
