#!/usr/bin/env bash
# Collection workloads side by side (issue #6's seed set): for each round and
# each server, a fresh server on CPU 1 is pre-filled, then the load generator
# on CPU 0 runs every workload; prints the median requests/s over rounds, the
# ratio to the first server, server CPU microseconds per request, and the
# median core utilisation of server and load generator (CPU seconds / wall
# seconds: whichever is near 1.00 set the rate).
#   perf/collections_bench.sh [-r ROUNDS] SERVER_CMD [SERVER_CMD...]
#   e.g. perf/collections_bench.sh redis-server build/ringkv-server
#        LOADGEN=lean perf/collections_bench.sh redis-server build/ringkv-server
# Workloads (-c 50):
#   LPUSH          LPUSH mylist <64 bytes>       (one list)
#   LRANGE_100     LRANGE l100 0 99              (100 x 64-byte elements)
#   LRANGE_1000    LRANGE l1000 0 999            (1,000 x 64-byte elements)
#   HSET           HSET myhash field:RAND value  (random fields of one hash)
#   HGETALL_1000   HGETALL h1000                 (1,000 fields, 16-byte values)
#   SADD           SADD myset member:RAND        (random members of one set)
#   ZADD           ZADD myzset RAND member:RAND  (random members of one zset)
#   ZRANGE_WS      ZRANGE z1000 0 99 WITHSCORES  (a 1,000-member skiplist)
#   ZUNIONSTORE    ZUNIONSTORE zdst 2 za zb      (two 300-member sets, half shared)
# RAND is a random number below 100,000 per request.
# Env: LOADGEN (redis-benchmark, default; or lean: build/perf/lean_load, which
# counts replies without building them -- redis-benchmark spends ~100 us of
# its core per 1,000-element reply and so sets the rate of the large reads on
# a 2-core machine), PIPE (requests in flight per connection, default 1),
# N (requests, default 100000), N_BIG (for the 1,000-element reads, default
# 100000: long enough that a fresh server's first seconds do not dominate),
# CLIENTS (50), WORKLOADS (all of the above), LEAN_LOAD (the lean binary,
# default build/perf/lean_load).
set -euo pipefail
ROUNDS=3
while getopts "r:" o; do case $o in r) ROUNDS=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-r ROUNDS] SERVER_CMD..." >&2; exit 2; }
N=${N:-100000}
N_BIG=${N_BIG:-100000}
CLIENTS=${CLIENTS:-50}
WORKLOADS=${WORKLOADS:-"LPUSH LRANGE_100 LRANGE_1000 HSET HGETALL_1000 SADD ZADD ZRANGE_WS ZUNIONSTORE"}
LOADGEN=${LOADGEN:-redis-benchmark}
PIPE=${PIPE:-1}
LEAN_LOAD=${LEAN_LOAD:-$(dirname "$0")/../build/perf/lean_load}
case $LOADGEN in
  redis-benchmark) ;;
  lean) [[ -x $LEAN_LOAD ]] || { echo "no $LEAN_LOAD: build the lean_load target" >&2; exit 2; } ;;
  *) echo "LOADGEN must be redis-benchmark or lean" >&2; exit 2 ;;
esac
V64=$(printf 'x%.0s' $(seq 64))
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

spec() {  # workload -> "requests|command" (both load generators take the same words)
  case $1 in
    LPUSH) echo "$N|lpush mylist $V64" ;;
    LRANGE_100) echo "$N|lrange l100 0 99" ;;
    LRANGE_1000) echo "$N_BIG|lrange l1000 0 999" ;;
    HSET) echo "$N|hset myhash field:__rand_int__ value" ;;
    HGETALL_1000) echo "$N_BIG|hgetall h1000" ;;
    SADD) echo "$N|sadd myset member:__rand_int__" ;;
    ZADD) echo "$N|zadd myzset __rand_int__ member:__rand_int__" ;;
    ZRANGE_WS) echo "$N|zrange z1000 0 99 withscores" ;;
    ZUNIONSTORE) echo "$N|zunionstore zdst 2 za zb" ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
  esac
}

# load PORT REQUESTS WORDS...: one run; prints its CSV (requests/s second).
load() {
  local port=$1 n=$2
  shift 2
  if [[ $LOADGEN == lean ]]; then
    taskset -c 0 "$LEAN_LOAD" -p "$port" -c "$CLIENTS" -n "$n" -P "$PIPE" -r 100000 "$@"
  else
    taskset -c 0 redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -P "$PIPE" -r 100000 -q --csv "$@"
  fi
}

declare -A rps cpu srv_util cli_util
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
      TIMEFORMAT='%R %U %S'
      # shellcheck disable=SC2086
      { time load "$port" "$n" $args >"$work/out"; } 2>"$work/time"
      t1=$(cpu_ticks "$spid")
      r=$(tail -1 "$work/out" | awk -F'","' '{gsub(/"/, "", $2); print $2}')
      read -r wall cu cs <"$work/time"
      hz=$(getconf CLK_TCK)
      rps[$w,$i]+="$r "
      cpu[$w,$i]+="$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$n" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }') "
      srv_util[$w,$i]+="$(awk -v t="$((t1 - t0))" -v hz="$hz" -v w="$wall" 'BEGIN { printf "%.2f", t / hz / w }') "
      cli_util[$w,$i]+="$(awk -v u="$cu" -v s="$cs" -v w="$wall" 'BEGIN { printf "%.2f", (u + s) / w }') "
    done
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    wait "$spid" 2>/dev/null || true
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END { print a[int((NR + 1) / 2)] }'; }
printf "# collections_bench.sh %s rounds=%d N=%d N_BIG=%d clients=%d pipeline=%d loadgen=%s\n" \
  "$(date -u +%FT%TZ)" "$ROUNDS" "$N" "$N_BIG" "$CLIENTS" "$PIPE" "$LOADGEN"
printf "%-14s" workload
for s in "$@"; do printf " | %-24s" "$(basename "${s%% *}") rps (cpu us/req)"; done
printf " | ratio"
for s in "$@"; do printf " | %-11s" "$(basename "${s%% *}" | cut -c1-6) srv/cli"; done
printf "\n"
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
  printf " | %.2f " "$(awk -v a="$last" -v b="$first" 'BEGIN { print a / b }')"
  for i in $(seq $#); do
    printf " | %4s / %4s " "$(median <<<"${srv_util[$w,$i]}")" "$(median <<<"${cli_util[$w,$i]}")"
  done
  printf "\n"
done
