#!/usr/bin/env bash
# Memory on the primary while replicas lag by ~100 MB of stream: a primary
# and L replicas stopped with SIGSTOP (plus one that keeps up), 100,000 SETs
# of 1,000 bytes written, then the primary's RSS, used_memory and
# mem_total_replication_buffers (the stream blocks alive), and each stopped
# replica's lag. Run with L = 1 and L = 3: the difference, halved, is what
# one more lagging replica costs (the stream itself is held once).
#   perf/replica_lag_memory.sh SERVER_CMD...
set -euo pipefail
work=$(mktemp -d /tmp/lagmem.XXXXXX)
pids=()
stopped=()
trap 'for p in "${stopped[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
      for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"
SERVER_EXTRA=(--repl-backlog-size 1mb --client-output-buffer-limit "replica 0 0 0" --repl-timeout 3600)
field() { redis-cli -p "$1" info "$2" | tr -d '\r' | awk -F: -v f="$3" '$1 == f {print $2}'; }
printf "# replica_lag_memory.sh %s\n" "$(date -u +%FT%TZ)"
printf "%-36s %8s %10s %14s %16s %16s\n" server lagging lag_MB rss_MB used_memory_MB repl_buffers_MB
i=0
for cmd in "$@"; do
  for L in 1 3; do
    i=$((i + 1))
    pp=$(free_port)
    start_server "$cmd" "$work/$i/p" "$pp"
    ppid=${pids[-1]}
    rports=()
    for r in $(seq $((L + 1))); do
      rp=$(free_port)
      start_server "$cmd" "$work/$i/r$r" "$rp" --replicaof "127.0.0.1 $pp"
      rports+=("$rp")
      for _ in $(seq 1000); do [[ $(field "$rp" replication master_link_status) == up ]] && break; sleep 0.01; done
    done
    stopped=()
    for r in $(seq "$L"); do
      rpid=$(field "${rports[$r]}" server process_id)
      kill -STOP "$rpid"
      stopped+=("$rpid")
    done
    taskset -c 0 redis-benchmark -p "$pp" -c 20 -n 100000 -r 100000 -d 1000 -P 16 -t set -q >/dev/null 2>&1
    sleep 1
    end=$(field "$pp" replication master_repl_offset)
    # The stopped replicas' acknowledged offsets, as the primary last saw them.
    low=$(redis-cli -p "$pp" info replication | tr -d '\r' | grep -E '^slave[0-9]+:' | sed 's/.*offset=\([0-9]*\).*/\1/' | sort -n | head -1)
    lag=$(awk -v e="$end" -v l="$low" 'BEGIN { printf "%.1f", (e - l) / 1048576 }')
    rss=$(awk '/^VmRSS:/ {printf "%.1f", $2 / 1024}' "/proc/$ppid/status")
    used=$(awk -v b="$(field "$pp" memory used_memory)" 'BEGIN { printf "%.1f", b / 1048576 }')
    buf=$(field "$pp" memory mem_total_replication_buffers)
    buf=$(awk -v b="${buf:-0}" 'BEGIN { printf "%.1f", b / 1048576 }')
    printf "%-36s %8d %10s %14s %16s %16s\n" "$cmd" "$L" "$lag" "$rss" "$used" "$buf"
    for p in "${stopped[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
    stopped=()
    stop_servers
    rm -rf "${work:?}/$i"
  done
done
