#!/usr/bin/env bash
# Three-shard cluster benchmark (issue 26): for each server binary, a fresh
# cluster of 3 masters + 3 replicas on loopback, then
#   1. redis-benchmark --cluster SET / GET (CLIENTS clients, pipeline P):
#      requests/s and the masters' CPU microseconds per request
#      (utime + stime from /proc before and after);
#   2. slot migration time: DEBUG POPULATE KEYS on master 1 (the keys of
#      its own slots, about a third, are the ones that move; the nodes run
#      with enable-debug-command yes), master 2 emptied, then
#      `redis-cli --cluster reshard` of SLOTS slots
#      from master 1 to master 2, wall-clock seconds;
#   3. failover time: kill -9 of master 2, seconds until its replica
#      reports role:master and `cluster_state:ok` on the others.
# The nodes' folders are under WORKDIR (default a mktemp under /tmp: a
# real disk, since a ringkv node fsyncs nodes.conf on every change).
#   perf/cluster_bench.sh SERVER_BIN [SERVER_BIN...]
#   e.g. perf/cluster_bench.sh /usr/bin/redis-server build/ringkv-server
# Env: N (200000 requests per test), CLIENTS (50), P (16), KEYS (1000000),
#      SLOTS (5461: all of master 1's), NODE_TIMEOUT (5000 ms), BASEPORT (32000).
# The replicas may always run for election (cluster-replica-validity-factor
# 0): an idle master's replica is otherwise judged stale after the reshard.
# Figures are only meaningful on a quiet machine.
set -euo pipefail
(($# >= 1)) || { echo "usage: $0 SERVER_BIN..." >&2; exit 2; }
N=${N:-200000} CLIENTS=${CLIENTS:-50} P=${P:-16} KEYS=${KEYS:-1000000}
SLOTS=${SLOTS:-5461} NODE_TIMEOUT=${NODE_TIMEOUT:-5000} BASEPORT=${BASEPORT:-32000}
WORKDIR=${WORKDIR:-$(mktemp -d /tmp/cluster-bench-XXXXXX)}
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

cpu_ticks() {  # utime + stime of the given pids, in clock ticks
  local t=0 p
  for p in "$@"; do
    [[ -r /proc/$p/stat ]] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "$t"
}

wait_ok() {  # port...: until each says cluster_state:ok
  local p
  for p in "$@"; do
    for _ in $(seq 600); do
      [[ $(redis-cli -p "$p" cluster info 2>/dev/null) == *cluster_state:ok* ]] && break
      sleep 0.05
    done
  done
}

for bin in "$@"; do
  name=$(basename "$bin")
  bin_abs=$(cd "$(dirname "$bin")" && pwd)/$name  # not readlink: redis-server is a link to redis-check-rdb
  ports=() pids=()
  for i in 0 1 2 3 4 5; do
    port=$((BASEPORT + i)) dir=$WORKDIR/$name-$port
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && exec "$bin_abs" --port "$port" --cluster-enabled yes \
      --cluster-node-timeout "$NODE_TIMEOUT" --cluster-replica-validity-factor 0 \
      --save "" --appendonly no --enable-debug-command yes --logfile node.log) &
    pids+=($!) ports+=("$port")
  done
  for p in "${ports[@]}"; do
    for _ in $(seq 100); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.05; done
  done
  redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-replicas 1 --cluster-yes >/dev/null
  wait_ok "${ports[@]}"
  masters=() master_pids=()
  for i in "${!ports[@]}"; do
    if [[ $(redis-cli -p "${ports[$i]}" info replication) == *role:master* ]]; then
      masters+=("${ports[$i]}") master_pids+=("${pids[$i]}")
    fi
  done

  # 1. Throughput and CPU per request.
  for t in set get; do
    before=$(cpu_ticks "${master_pids[@]}")
    rps=$(redis-benchmark --cluster -p "${masters[0]}" -c "$CLIENTS" -P "$P" -n "$N" -r 1000000 -t "$t" -q 2>/dev/null |
      tr '\r' '\n' | awk '/requests per second/ {v = $2} END {print v}')
    after=$(cpu_ticks "${master_pids[@]}")
    us=$(awk -v d=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$N" 'BEGIN {printf "%.2f", d / hz * 1e6 / n}')
    echo "$name ${t^^}_P$P requests/s $rps cpu_us/request $us"
  done

  # 2. Slot migration: KEYS keys in master 1's slots, moved to master 2.
  src=${masters[1]} dst=${masters[2]}
  src_id=$(redis-cli -p "$src" cluster myid) dst_id=$(redis-cli -p "$dst" cluster myid)
  redis-cli -p "$src" flushall >/dev/null
  redis-cli -p "$dst" flushall >/dev/null  # what it holds after the reshard is what moved
  redis-cli -p "$src" debug populate "$KEYS" >/dev/null  # keys of every slot: the others stay
  echo "$name populated $(redis-cli -p "$src" dbsize) keys, $(redis-cli -p "$src" cluster countkeysinslot 0) in slot 0" >&2
  start=$(date +%s.%N)
  redis-cli --cluster reshard "127.0.0.1:$src" --cluster-from "$src_id" --cluster-to "$dst_id" \
    --cluster-slots "$SLOTS" --cluster-yes --cluster-pipeline 100 >/dev/null 2>&1 || echo "$name reshard failed" >&2
  end=$(date +%s.%N)
  echo "$name reshard_slots $SLOTS keys_moved $(redis-cli -p "$dst" dbsize) seconds $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}')"
  redis-cli -p "$dst" flushall >/dev/null

  # 3. Failover after kill -9 of a master that has slots (master 2 now).
  victim=$dst
  for i in "${!ports[@]}"; do
    if [[ ${ports[$i]} == "$victim" ]]; then victim_pid=${pids[$i]}; fi
  done
  victim_id=$(redis-cli -p "$victim" cluster myid)
  replica=$(redis-cli -p "${masters[0]}" cluster nodes | awk -v m="$victim_id" '$4 == m {split($2, a, "[:@]"); print a[2]}')
  start=$(date +%s.%N)
  kill -9 "$victim_pid"
  for _ in $(seq 1200); do
    [[ $(redis-cli -p "$replica" info replication 2>/dev/null) == *role:master* ]] && break
    sleep 0.05
  done
  wait_ok "${masters[0]}" "$replica"
  end=$(date +%s.%N)
  echo "$name failover_seconds $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') (node-timeout ${NODE_TIMEOUT} ms)"
  cleanup
  sleep 0.5
done
