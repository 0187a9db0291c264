#!/usr/bin/env bash
# Usage: perf/scripting_heap.sh BINARY [BINARY...]
#
# The Lua heap of the EVAL interpreter under load (issue 18; docs/performance.md
# 31.1): for each binary, a fresh server; for the ten-command script and the
# INCR script of perf/scripting_workloads.sh, INFO memory's
# used_memory_vm_eval is sampled 40 times, every 50 ms, while
# redis-benchmark -c 50 -P 16 runs EVALSHA; prints the smallest and largest
# sample. What the collector's policy lets the heap swing between.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripting_workloads.sh
source "$HERE/scripting_workloads.sh"
for bin in "$@"; do
  PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$bin" --port "$PORT" --save "" --appendonly no >/dev/null 2>&1 &
  SPID=$!
  trap 'kill "$SPID" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  for script in BODY10 SCRIPT_INCR; do
    sha=$(redis-cli -p "$PORT" script load "${!script}")
    args=(1 key:__rand_int__)
    [[ $script == BODY10 ]] && args+=(7)
    redis-benchmark -p "$PORT" -c 50 -P 16 -n 600000 -r 100000 evalsha "$sha" "${args[@]}" -q >/dev/null 2>&1 &
    BPID=$!
    sleep 0.3
    samples=()
    for _ in $(seq 40); do
      samples+=("$(redis-cli -p "$PORT" info memory | tr -d '\r' | awk -F: '$1 == "used_memory_vm_eval" {print $2}')")
      sleep 0.05
    done
    kill "$BPID" 2>/dev/null || true
    wait "$BPID" 2>/dev/null || true
    sorted=$(printf '%s\n' "${samples[@]}" | sort -n)
    printf '%-24s %-12s used_memory_vm_eval min %s max %s\n' "$(basename "$bin")" "$script" \
      "$(head -1 <<<"$sorted")" "$(tail -1 <<<"$sorted")"
  done
  redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
  wait "$SPID" 2>/dev/null || true
  trap - EXIT
done
