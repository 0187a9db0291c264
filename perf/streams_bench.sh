#!/usr/bin/env bash
# Stream workloads side by side (issue 21's benchmark): a fresh server per
# round and server on CPU 1, the load generator on CPU 0, 50 clients, each
# workload without and with a pipeline of 16; prints medians of requests/s
# and server CPU microseconds per request, with ratios to the first server.
#   perf/streams_bench.sh [-r ROUNDS] SERVER_CMD [SERVER_CMD...]
#   e.g. perf/streams_bench.sh -r 3 redis-server build/ringkv-server
# Workloads (P1 / P16 = pipeline depth):
#   XADD_P1, XADD_P16      XADD sx MAXLEN ~ 1000000 * f1 RAND f2 <16 B> f3 <16 B>
#                          (N + N_PIPE entries: the P16 run passes 1,000,000 and trims)
#   XRANGE100_P1, _P16     XRANGE sr - + COUNT 100 (sr: 1,000 entries of 3 fields)
#   XRGACK_P1, _P16        build/perf/stream_consumer_load: per connection, P
#                          XREADGROUP GROUP g c<i> COUNT 1 STREAMS sq > then the P
#                          XACKs of the IDs read (sq: N_LOOP_PIPE/2 + N_LOOP/2
#                          entries; groups gp1 and gp16 from 0)
# RAND is a random number below 100,000.  Env: ROUNDS (3), CLIENTS (50),
# N (100000), N_PIPE (1000000), N_RANGE (50000), N_RANGE_PIPE (200000),
# N_LOOP (100000), N_LOOP_PIPE (400000), WORKLOADS (all of the above).
# Needs build/perf/stream_consumer_load (cmake --build build --target stream_consumer_load).
set -euo pipefail
ROUNDS=${ROUNDS:-3}
while getopts "r:" o; do case $o in r) ROUNDS=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-r ROUNDS] SERVER_CMD..." >&2; exit 2; }
NAME=streams_bench.sh
CLIENTS=${CLIENTS:-50}
KEYSPACE=100000
N=${N:-100000}
N_PIPE=${N_PIPE:-1000000}
N_RANGE=${N_RANGE:-50000}
N_RANGE_PIPE=${N_RANGE_PIPE:-200000}
N_LOOP=${N_LOOP:-100000}
N_LOOP_PIPE=${N_LOOP_PIPE:-400000}
WORKLOADS=${WORKLOADS:-"XADD_P1 XADD_P16 XRANGE100_P1 XRANGE100_P16 XRGACK_P1 XRGACK_P16"}
source "$(dirname "$0")/workload_lib.sh"
[[ -x $CONSUMER_LOAD ]] || { echo "no $CONSUMER_LOAD: cmake --build build --target stream_consumer_load" >&2; exit 2; }
V16=0123456789abcdef

python3 - "$((N_LOOP / 2 + N_LOOP_PIPE / 2 + 1000))" >"$work/fill.resp" <<'PY'
import sys
out = sys.stdout.buffer
def cmd(*args):
    a = [x if isinstance(x, bytes) else str(x).encode() for x in args]
    out.write(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a))
for i in range(1000):
    cmd("XADD", "sr", "*", "f1", i, "f2", "0123456789abcdef", "f3", "0123456789abcdef")
for i in range(int(sys.argv[1])):
    cmd("XADD", "sq", "*", "job", i, "queue", "default", "payload", "0123456789abcdef")
cmd("XGROUP", "CREATE", "sq", "gp1", "0")
cmd("XGROUP", "CREATE", "sq", "gp16", "0")
PY
prefill() { redis-cli -p "$1" --pipe <"$work/fill.resp" >/dev/null; }

spec() {
  case $1 in
    XADD_P1) echo "$N|1|rb|xadd sx maxlen ~ 1000000 * f1 __rand_int__ f2 $V16 f3 $V16" ;;
    XADD_P16) echo "$N_PIPE|16|rb|xadd sx maxlen ~ 1000000 * f1 __rand_int__ f2 $V16 f3 $V16" ;;
    XRANGE100_P1) echo "$N_RANGE|1|rb|xrange sr - + count 100" ;;
    XRANGE100_P16) echo "$N_RANGE_PIPE|16|rb|xrange sr - + count 100" ;;
    XRGACK_P1) echo "$N_LOOP|1|consumer|-k sq -g gp1" ;;
    XRGACK_P16) echo "$N_LOOP_PIPE|16|consumer|-k sq -g gp16" ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
  esac
}

run_workloads "$@"
print_table "$@"
