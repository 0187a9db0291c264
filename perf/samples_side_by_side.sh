#!/usr/bin/env bash
# Where two servers' CPU goes for the same requests, symbol by symbol,
# kernel included: for a gap against the floor that user-space counts
# (callgrind) cannot see.
#   perf/samples_side_by_side.sh ROUNDS N "REDIS-BENCHMARK TEST ARGS" SERVER_A SERVER_B
#   perf/samples_side_by_side.sh 3 1000000 "-t ping_mbulk" /tmp/bench/uring_pong build/ringkv-server
# Each round runs A, then B, each fresh (perf/servers.sh's start_server,
# without persistence, CPU 1) under `redis-benchmark -c 50 -n N TEST` (CPU 0;
# a GET test gets 100,000 keys of 64 bytes first). `perf record -e cpu-clock
# -F 10000` covers the whole run of N requests, so sample counts (0.1 ms
# each) compare per request. Prints the samples per DSO of each server
# summed over the rounds, each round's total, and the symbols that differ
# most (B - A), both ways, and with SYMBOLS=REGEX every symbol matching it.
set -euo pipefail
(($# == 5)) || { sed -n '5,6p' "$0" >&2; exit 2; }
ROUNDS=$1 N=$2 TEST=$3 A=$4 B=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pids=()
# shellcheck source=servers.sh
source "$(dirname "$0")/servers.sh"
record() {  # record SERVER OUT
  start_pinned "$1" "$work/server"
  preload_for_get "$port" "$TEST"
  bench_with_perf "$N" "$TEST" record -e cpu-clock -F 10000 -o "$2.data"
  stop_pinned
  perf report -i "$2.data" --no-children --sort dso,sym --stdio -n 2>/dev/null |
    awk '/^ +[0-9.]+%/ {dso = $3; sym = $5; for (i = 6; i <= NF; ++i) sym = sym " " $i; print $2 "\t" dso "\t" sym}' >"$2.cnt"
}
for round in $(seq "$ROUNDS"); do
  record "$A" "$work/a$round"
  record "$B" "$work/b$round"
  printf "round %d: A %d samples, B %d samples\n" "$round" \
    "$(awk -F'\t' '{s += $1} END {print s}' "$work/a$round.cnt")" "$(awk -F'\t' '{s += $1} END {print s}' "$work/b$round.cnt")"
done
cat "$work"/a*.cnt >"$work/A"
cat "$work"/b*.cnt >"$work/B"
echo "# samples per DSO over the rounds (A: $A, B: $B)"
for s in A B; do
  awk -F'\t' -v s="$s" '{d[$2] += $1; t += $1} END {for (k in d) printf "%s %-40s %9d\n", s, k, d[k]; printf "%s %-40s %9d\n", s, "(all)", t}' "$work/$s" | sort -k3,3nr
done
echo "# symbols, B - A (samples): most above A, then most below"
awk -F'\t' 'FNR == NR {a[$3] += $1; next} {b[$3] += $1} END {for (k in a) if (!(k in b)) b[k] = 0; for (k in b) printf "%9d %9d %9d  %s\n", b[k] - a[k], a[k], b[k], k}' \
  "$work/A" "$work/B" | sort -k1,1nr >"$work/diff"
echo "#  B - A         A         B  symbol"
head -20 "$work/diff"
echo "..."
tail -10 "$work/diff"
if [[ -n ${SYMBOLS:-} ]]; then
  echo "# symbols matching SYMBOLS=$SYMBOLS"
  grep -E -- "$SYMBOLS" "$work/diff" || true
fi
