#!/usr/bin/env bash
# Bitmap, HyperLogLog and geo workloads side by side (issue 22's benchmark):
# a fresh server per round and server on CPU 1, the load generator
# (redis-benchmark) on CPU 0, 50 clients; prints medians of requests/s and
# server CPU microseconds per request, with ratios to the first server.
#   perf/bitmaps_bench.sh [-r ROUNDS] SERVER_CMD [SERVER_CMD...]
#   e.g. perf/bitmaps_bench.sh -r 3 redis-server build/ringkv-server
# Workloads:
#   SETBIT_P16     SETBIT bm OFF 1             pipeline 16, OFF random in 1,000,000..9,999,999
#   GETBIT_P16     GETBIT bm OFF               (a 1.25 MB bitmap); load generator build/perf/lean_load
#                  (redis-benchmark's zero-padded __rand_int__ is no valid offset for Redis)
#   PFADD_P16      PFADD hll RAND              pipeline 16, RAND < 8,000,000 (dense after ~3,000 elements)
#   BITCOUNT_1MIB  BITCOUNT big                 big: 1 MiB of pseudo-random bytes
#   PFCOUNT_10     PFCOUNT h0 h1 ... h9        ten dense HLLs of 20,000 elements each
#   GEOSEARCH_1M   GEOSEARCH geo FROMLONLAT 13.5 52.5 BYRADIUS 1 km ASC COUNT 10
#                  geo: 1,000,000 members uniform over 13-14 E, 52-53 N
#                  (about 400 within 1 km of the centre)
# Env: ROUNDS (3), CLIENTS (50), N_PIPE (1000000), N_HEAVY (20000: BITCOUNT,
# PFCOUNT), N_GEO (100000), WORKLOADS (all of the above).
set -euo pipefail
ROUNDS=${ROUNDS:-3}
while getopts "r:" o; do case $o in r) ROUNDS=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
(($# >= 1)) || { echo "usage: $0 [-r ROUNDS] SERVER_CMD..." >&2; exit 2; }
NAME=bitmaps_bench.sh
CLIENTS=${CLIENTS:-50}
KEYSPACE=8000000
N_PIPE=${N_PIPE:-1000000}
N_HEAVY=${N_HEAVY:-20000}
N_GEO=${N_GEO:-100000}
WORKLOADS=${WORKLOADS:-"SETBIT_P16 GETBIT_P16 PFADD_P16 BITCOUNT_1MIB PFCOUNT_10 GEOSEARCH_1M"}
source "$(dirname "$0")/workload_lib.sh"
[[ -x $LEAN_LOAD ]] || { echo "no $LEAN_LOAD: cmake --build build --target lean_load" >&2; exit 2; }

python3 - >"$work/fill.resp" <<'PY'
import random, sys
out = sys.stdout.buffer
def cmd(*args):
    a = [x if isinstance(x, bytes) else str(x).encode() for x in args]
    out.write(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a))
rnd = random.Random(22)
cmd("SET", "big", rnd.randbytes(1 << 20))
for k in range(10):
    for base in range(0, 20000, 1000):
        cmd("PFADD", "h%d" % k, *["k%d:%d" % (k, i) for i in range(base, base + 1000)])
for base in range(0, 1000000, 1000):
    args = []
    for i in range(base, base + 1000):
        args += ["%.6f" % (13 + rnd.random()), "%.6f" % (52 + rnd.random()), "m%d" % i]
    cmd("GEOADD", "geo", *args)
PY
prefill() { redis-cli -p "$1" --pipe <"$work/fill.resp" >/dev/null; }

spec() {
  case $1 in
    SETBIT_P16) echo "$N_PIPE|16|lean|-d 7 setbit bm __rand_int__ 1" ;;
    GETBIT_P16) echo "$N_PIPE|16|lean|-d 7 getbit bm __rand_int__" ;;
    PFADD_P16) echo "$N_PIPE|16|rb|pfadd hll __rand_int__" ;;
    BITCOUNT_1MIB) echo "$N_HEAVY|1|rb|bitcount big" ;;
    PFCOUNT_10) echo "$N_HEAVY|1|rb|pfcount h0 h1 h2 h3 h4 h5 h6 h7 h8 h9" ;;
    GEOSEARCH_1M) echo "$N_GEO|1|rb|geosearch geo fromlonlat 13.5 52.5 byradius 1 km asc count 10" ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
  esac
}

run_workloads "$@"
print_table "$@"
