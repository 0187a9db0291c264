#!/usr/bin/env bash
# Usage: perf/scripting_heap.sh SERVER_CMD [SERVER_CMD...]
#
# The Lua heap of the EVAL interpreter under load (issue 18; docs/performance.md
# 31.1): for each server, a fresh one (perf/servers.sh: CPU 1, no
# persistence); for the ten-command script and the INCR script of
# perf/scripting_workloads.sh, INFO memory's used_memory_vm_eval is sampled
# 40 times, every 50 ms, while redis-benchmark -c 50 -P 16 runs EVALSHA;
# prints the smallest and largest sample: what the collector's policy lets
# the heap swing between.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripting_workloads.sh
source "$HERE/scripting_workloads.sh"
# shellcheck source=servers.sh
source "$HERE/servers.sh"
# shellcheck disable=SC2034  # both are read by servers.sh's functions
pids=()
# shellcheck disable=SC2034
SERVER_EXTRA=()
work=$(mktemp -d /tmp/scripting_heap.XXXXXX)
trap 'stop_servers; rm -rf "$work"' EXIT
i=0
for cmd in "$@"; do
  i=$((i + 1))
  port=$(free_port)
  start_server "$cmd" "$work/$i" "$port"
  for script in BODY10 SCRIPT_INCR; do
    sha=$(redis-cli -p "$port" script load "${!script}")
    args=(1 key:__rand_int__)
    [[ $script == BODY10 ]] && args+=(7)
    taskset -c 0 redis-benchmark -p "$port" -c 50 -P 16 -n 600000 -r 100000 evalsha "$sha" "${args[@]}" -q \
      >/dev/null 2>&1 &
    bench=$!
    sleep 0.3
    samples=()
    for _ in $(seq 40); do
      samples+=("$(redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '$1 == "used_memory_vm_eval" {print $2}')")
      sleep 0.05
    done
    kill "$bench" 2>/dev/null || true
    wait "$bench" 2>/dev/null || true
    sorted=$(printf '%s\n' "${samples[@]}" | sort -n)
    printf '%-24s %-12s used_memory_vm_eval min %s max %s\n' "$(basename "${cmd%% *}")" "$script" \
      "$(head -1 <<<"$sorted")" "$(tail -1 <<<"$sorted")"
  done
  stop_servers
done
