#!/usr/bin/env bash
# Collection workloads side by side (issue #6's seed set): for each round and
# each server, a fresh server on CPU 1 is pre-filled, then redis-benchmark on
# CPU 0 runs every workload; prints the median requests/s over rounds, the
# ratio to the first server, and server CPU microseconds per request.
#   perf/collections_bench.sh [-r ROUNDS] SERVER_CMD [SERVER_CMD...]
#   e.g. perf/collections_bench.sh redis-server build/ringkv-server
# Workloads (-c 50, no pipeline):
#   LPUSH          -t lpush                      (one list, 64-byte values)
#   LRANGE_100     LRANGE l100 0 99              (100 x 64-byte elements)
#   LRANGE_1000    LRANGE l1000 0 999            (1,000 x 64-byte elements)
#   HSET           -t hset                       (random fields of one hash)
#   HGETALL_1000   HGETALL h1000                 (1,000 fields, 16-byte values)
#   SADD           -t sadd                       (random members of one set)
#   ZADD           -t zadd                       (random members of one zset)
#   ZRANGE_WS      ZRANGE z1000 0 99 WITHSCORES  (a 1,000-member skiplist)
#   ZUNIONSTORE    ZUNIONSTORE zdst 2 za zb      (two 300-member sets, half shared)
# Env: N (requests, default 100000), N_BIG (for the 1,000-element reads,
# default 100000: long enough that a fresh server's first seconds do not
# dominate), CLIENTS (50), WORKLOADS (all of the above).
set -euo pipefail
ROUNDS=3
while getopts "r:" o; do case $o in r) ROUNDS=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-r ROUNDS] SERVER_CMD..." >&2; exit 2; }
N=${N:-100000}
N_BIG=${N_BIG:-100000}
CLIENTS=${CLIENTS:-50}
WORKLOADS=${WORKLOADS:-"LPUSH LRANGE_100 LRANGE_1000 HSET HGETALL_1000 SADD ZADD ZRANGE_WS ZUNIONSTORE"}
work=$(mktemp -d /tmp/coll-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"

# The pre-filled data, as RESP for redis-cli --pipe.
python3 - >"$work/fill.resp" <<'PY'
import sys
out = sys.stdout.buffer
def cmd(*args):
    a = [x if isinstance(x, bytes) else str(x).encode() for x in args]
    out.write(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a))
v64 = b"x" * 64
cmd("RPUSH", "l100", *[v64] * 100)
cmd("RPUSH", "l1000", *[v64] * 1000)
cmd("HSET", "h1000", *[b for i in range(1000) for b in (b"field:%06d" % i, b"value:%010d" % i)])
cmd("ZADD", "z1000", *[b for i in range(1000) for b in (str(i * 1.5).encode(), b"member:%06d" % i)])
cmd("ZADD", "za", *[b for i in range(300) for b in (str(i).encode(), b"m:%06d" % i)])
cmd("ZADD", "zb", *[b for i in range(150, 450) for b in (str(i * 2).encode(), b"m:%06d" % i)])
PY

spec() {  # workload -> "requests|redis-benchmark args"
  case $1 in
    LPUSH) echo "$N|-t lpush -d 64" ;;
    LRANGE_100) echo "$N|lrange l100 0 99" ;;
    LRANGE_1000) echo "$N_BIG|lrange l1000 0 999" ;;
    HSET) echo "$N|-r 100000 hset myhash field:__rand_int__ value" ;;
    HGETALL_1000) echo "$N_BIG|hgetall h1000" ;;
    SADD) echo "$N|-r 100000 sadd myset member:__rand_int__" ;;
    ZADD) echo "$N|-r 100000 zadd myzset __rand_int__ member:__rand_int__" ;;
    ZRANGE_WS) echo "$N|zrange z1000 0 99 withscores" ;;
    ZUNIONSTORE) echo "$N|zunionstore zdst 2 za zb" ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
  esac
}

declare -A rps cpu
for round in $(seq "$ROUNDS"); do
  i=0
  for server in "$@"; do
    i=$((i + 1))
    port=$(free_port)
    start_server "$server" "$work/s$i-r$round" "$port"
    spid=${pids[-1]}
    redis-cli -p "$port" --pipe <"$work/fill.resp" >/dev/null
    for w in $WORKLOADS; do
      IFS='|' read -r n args <<<"$(spec "$w")"
      t0=$(cpu_ticks "$spid")
      # shellcheck disable=SC2086
      r=$(taskset -c 0 redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -q --csv $args | tail -1 |
        awk -F'","' '{gsub(/"/, "", $2); print $2}')
      t1=$(cpu_ticks "$spid")
      rps[$w,$i]+="$r "
      cpu[$w,$i]+="$(awk -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v n="$n" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }') "
    done
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    wait "$spid" 2>/dev/null || true
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END { print a[int((NR + 1) / 2)] }'; }
printf "# collections_bench.sh %s rounds=%d N=%d N_BIG=%d clients=%d\n" "$(date -u +%FT%TZ)" "$ROUNDS" "$N" "$N_BIG" "$CLIENTS"
printf "%-14s" workload
for s in "$@"; do printf " | %-24s" "$(basename "${s%% *}") rps (cpu us/req)"; done
printf " | ratio\n"
for w in $WORKLOADS; do
  printf "%-14s" "$w"
  first=""
  last=""
  for i in $(seq $#); do
    m=$(median <<<"${rps[$w,$i]}")
    c=$(median <<<"${cpu[$w,$i]}")
    printf " | %12s (%6s)      " "$m" "$c"
    [[ -z $first ]] && first=$m
    last=$m
  done
  printf " | %.2f\n" "$(awk -v a="$last" -v b="$first" 'BEGIN { print a / b }')"
done
