#!/usr/bin/env bash
# Usage: perf/scripting_bench.sh [-r ROUNDS] SERVER_CMD [SERVER_CMD...]
#   e.g. perf/scripting_bench.sh "redis-server" "build/ringkv-server"
#
# Scripting side by side (issue 18), in the style of ../shared/bench/throughput.sh
# (whose lib.sh it sources: free ports, pinning, /proc CPU ticks, medians).
# Interleaved rounds (round 1: A B ..., round 2: A B ...), a fresh server per
# (round, server); prints the median over rounds of requests/s, server CPU
# microseconds per request (utime+stime of the whole server process from
# /proc/PID/stat, 10 ms ticks), and each one's ratio to the first server.
#
# Workloads (redis-benchmark custom commands, -c $CLIENTS -r $KEYSPACE, fixed
# request counts; _P1 without pipelining, _P16 with -P $PIPE):
#   EVALSHA_INCR   SCRIPT LOAD "return redis.call('INCR', KEYS[1])", then
#                  EVALSHA <sha> 1 key:__rand_int__
#   EVALSHA_10     SCRIPT LOAD of a 10-command script on KEYS[1]/ARGV[1]
#                  (2 SET, 5 INCR, 3 GET), then EVALSHA <sha> 1 key:__rand_int__ 7
#   FCALL_INCR     FUNCTION LOAD of library "benchlib" (the same two bodies as
#                  functions incr1 / cmd10), then FCALL incr1 1 key:__rand_int__
#   FCALL_10       FCALL cmd10 1 key:__rand_int__ 7
# Each server's error replies (INFO stats total_error_replies) are checked after
# its runs: redis-benchmark does not notice error replies by itself.
#
# Memory: on each fresh server, 1 s after it answers PING and before anything
# else, INFO memory used_memory and VmRSS (never ran a script); then again
# after one EVAL "return redis.call('INCR', KEYS[1])" 1 memkey (for
# information: that creates the EVAL interpreter). Medians over rounds; also
# INFO memory used_memory_vm_total (the Lua interpreters' own memory).
#
# Server command: split with shell quoting, started as
#   CMD --port P --save "" --appendonly no $SERVER_EXTRA_ARGS
# Server(s) on cpu $SERVER_CPUS, load generator on cpu $CLIENT_CPUS when >= 2
# cpus (lib.sh: PIN, SERVER_CPUS, CLIENT_CPUS).
#
# Environment (defaults): ROUNDS=3 CLIENTS=50 PIPE=16 KEYSPACE=100000
#   N=100000 (P1 requests)  N_PIPE=400000 (P16 requests)
#   N10=50000 N10_PIPE=150000 (the same for the 10-command script)
#   WORKLOADS="EVALSHA_INCR_P1 EVALSHA_INCR_P16 EVALSHA_10_P1 EVALSHA_10_P16
#              FCALL_INCR_P1 FCALL_INCR_P16 FCALL_10_P1 FCALL_10_P16"
#   LABELS=comma,separated,names (default S1,S2,...)  RAW=path (copy per-run CSV)
#   REDIS_CLI (redis-cli; loads the scripts and reads INFO)  BENCH_LIB (lib.sh
#   path; default ../shared/bench/lib.sh next to this repository)
#   plus lib.sh knobs: SERVER_EXTRA_ARGS REDIS_BENCHMARK PIN SERVER_CPUS
#   CLIENT_CPUS RUN_TIMEOUT KEEP QUIET_MAX QUIET_WAIT
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_LIB=${BENCH_LIB:-$HERE/../../shared/bench/lib.sh}
[[ -r $BENCH_LIB ]] || { echo "error: no $BENCH_LIB (set BENCH_LIB to ../shared/bench/lib.sh)" >&2; exit 1; }
# shellcheck source=/dev/null
source "$BENCH_LIB"

ROUNDS=${ROUNDS:-3}
while getopts "r:h" opt; do
  case $opt in
    r) ROUNDS=$OPTARG ;;
    h) awk 'NR > 1 && /^#/ {print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($# >= 1)) || { sed -n '2,3p' "$0" >&2; exit 2; }
((ROUNDS >= 1)) || bench_die "ROUNDS must be >= 1"

CLIENTS=${CLIENTS:-50}
PIPE=${PIPE:-16}
KEYSPACE=${KEYSPACE:-100000}
N=${N:-100000}
N_PIPE=${N_PIPE:-400000}
N10=${N10:-50000}
N10_PIPE=${N10_PIPE:-150000}
WORKLOADS=${WORKLOADS:-"EVALSHA_INCR_P1 EVALSHA_INCR_P16 EVALSHA_10_P1 EVALSHA_10_P16 FCALL_INCR_P1 FCALL_INCR_P16 FCALL_10_P1 FCALL_10_P16"}

SERVERS=("$@")
NS=${#SERVERS[@]}
bench_labels "$NS"
bench_setup_pinning
bench_raise_nofile $((CLIENTS + 256))
command -v "$REDIS_BENCHMARK" >/dev/null || bench_die "no $REDIS_BENCHMARK"
command -v "$REDIS_CLI" >/dev/null || bench_die "no $REDIS_CLI (needed to load scripts and read INFO)"

# shellcheck source=scripting_workloads.sh
source "$(dirname "${BASH_SOURCE[0]}")/scripting_workloads.sh"
SCRIPT_10=$BODY10
SHA_INCR=$(printf '%s' "$SCRIPT_INCR" | sha1sum | cut -d' ' -f1)
SHA_10=$(printf '%s' "$SCRIPT_10" | sha1sum | cut -d' ' -f1)

# workload -> "requests|redis-benchmark args"
wl_spec() {
  case $1 in
    EVALSHA_INCR_P1) echo "$N|-P 1 evalsha $SHA_INCR 1 key:__rand_int__" ;;
    EVALSHA_INCR_P16) echo "$N_PIPE|-P $PIPE evalsha $SHA_INCR 1 key:__rand_int__" ;;
    EVALSHA_10_P1) echo "$N10|-P 1 evalsha $SHA_10 1 key:__rand_int__ 7" ;;
    EVALSHA_10_P16) echo "$N10_PIPE|-P $PIPE evalsha $SHA_10 1 key:__rand_int__ 7" ;;
    FCALL_INCR_P1) echo "$N|-P 1 fcall incr1 1 key:__rand_int__" ;;
    FCALL_INCR_P16) echo "$N_PIPE|-P $PIPE fcall incr1 1 key:__rand_int__" ;;
    FCALL_10_P1) echo "$N10|-P 1 fcall cmd10 1 key:__rand_int__ 7" ;;
    FCALL_10_P16) echo "$N10_PIPE|-P $PIPE fcall cmd10 1 key:__rand_int__ 7" ;;
    *) bench_die "unknown workload $1" ;;
  esac
}
for w in $WORKLOADS; do wl_spec "$w" >/dev/null; done

cli() { timeout 10 "$REDIS_CLI" -h 127.0.0.1 -p "$@"; }
info_field() { # port section field
  cli "$1" info "$2" | tr -d '\r' | awk -F: -v f="$3" '$1 == f {print $2; exit}'
}

RAWF="$BENCH_TMP/raw.csv"
MEMF="$BENCH_TMP/mem.csv"
echo "round,workload,server,requests,rps,avg_ms,p50_ms,p99_ms,srv_cpu_s,srv_cpu_us_per_req,srv_core_util,cli_core_util,other_util,wall_s" >"$RAWF"
echo "round,server,used_fresh,rss_kb_fresh,vm_fresh,used_eval,rss_kb_eval,vm_eval" >"$MEMF"

echo "# scripting_bench.sh  $(date -u +%FT%TZ)  host: $(nproc) cpus, $(uname -r)"
echo "# load generator: $("$REDIS_BENCHMARK" --version 2>&1 | head -1)"
echo "# $BENCH_PIN_NOTE"
echo "# clients=$CLIENTS pipeline=$PIPE keyspace=$KEYSPACE N=$N N_PIPE=$N_PIPE N10=$N10 N10_PIPE=$N10_PIPE rounds=$ROUNDS (median reported), fresh server per round"
echo "# sha(INCR script)=$SHA_INCR sha(10-command script)=$SHA_10"
for ((s = 0; s < NS; s++)); do echo "# ${BENCH_LABELS[s]}: ${SERVERS[s]}"; bench_warn_iothreads "${SERVERS[s]}" "${BENCH_LABELS[s]}"; done

run_one() { # round server_index workload port pid
  local round=$1 si=$2 w=$3 port=$4 pid=$5 spec req args t0 t1 tf out
  spec=$(wl_spec "$w")
  req=${spec%%|*}
  args=${spec#*|}
  out="$BENCH_TMP/r${round}_${BENCH_LABELS[si]}_$w.out"
  tf="$BENCH_TMP/time.$$"
  local b0 b1
  bench_wait_quiet
  b0=$(bench_sys_busy_ticks)
  t0=$(bench_cpu_ticks "$pid")
  local TIMEFORMAT='%R %U %S'
  # shellcheck disable=SC2086
  { time timeout -k 5 "$RUN_TIMEOUT" "${BENCH_CLI_PRE[@]}" "$REDIS_BENCHMARK" -h 127.0.0.1 -p "$port" \
      -c "$CLIENTS" -n "$req" -r "$KEYSPACE" --csv $args >"$out" 2>"$out.err"; } 2>"$tf" ||
    { cat "$out.err" >&2; bench_die "redis-benchmark failed: $w on ${SERVERS[si]}"; }
  t1=$(bench_cpu_ticks "$pid")
  b1=$(bench_sys_busy_ticks)
  bench_alive "$pid" || bench_die "server ${SERVERS[si]} died during $w"
  local line
  line=$(grep -v '^"test"' "$out" | tail -n 1 | tr -d '"')
  [[ -n $line ]] || { cat "$out" "$out.err" >&2; bench_die "no CSV result for $w"; }
  read -r wall cu cs <"$tf"
  # the test name (the command line) has no commas: f[2] is rps
  awk -v line="$line" -v round="$round" -v w="$w" -v s="${BENCH_LABELS[si]}" -v req="$req" \
      -v dt=$((t1 - t0)) -v db=$((b1 - b0)) -v tck="$CLK_TCK" -v wall="$wall" -v cu="$cu" -v cs="$cs" 'BEGIN {
    n = split(line, f, ",")
    cpu = dt / tck
    other = db / tck - cpu - (cu + cs); if (other < 0) other = 0
    printf "%s,%s,%s,%d,%.2f,%s,%s,%s,%.2f,%.3f,%.2f,%.2f,%.2f,%.3f\n", round, w, s, req, f[2], f[3], f[5], f[7],
      cpu, cpu * 1e6 / req, (wall > 0 ? cpu / wall : 0), (wall > 0 ? (cu + cs) / wall : 0), (wall > 0 ? other / wall : 0), wall
  }' >>"$RAWF"
}

for ((round = 1; round <= ROUNDS; round++)); do
  for ((s = 0; s < NS; s++)); do
    bench_free_port
    port=$BENCH_PORT
    bench_start_server "r${round}_${BENCH_LABELS[s]}" "${SERVERS[s]}" "$port"
    pid=$BENCH_LAST_PID
    if ((round == 1)); then echo "# ${BENCH_LABELS[s]} version: $(bench_server_version "$port")"; fi
    # memory of a server that has never run a script, then after one EVAL
    sleep 1
    used0=$(info_field "$port" memory used_memory)
    rss0=$(bench_rss_kb "$pid")
    vm0=$(info_field "$port" memory used_memory_vm_total)
    r=$(cli "$port" eval "$SCRIPT_INCR" 1 memkey)
    [[ $r == 1 ]] || bench_die "EVAL on ${SERVERS[s]} answered '$r'"
    sleep 0.2
    used1=$(info_field "$port" memory used_memory)
    rss1=$(bench_rss_kb "$pid")
    vm1=$(info_field "$port" memory used_memory_vm_total)
    echo "$round,${BENCH_LABELS[s]},$used0,$rss0,${vm0:-?},$used1,$rss1,${vm1:-?}" >>"$MEMF"
    # load the scripts and the library; check what they answer
    r=$(cli "$port" script load "$SCRIPT_INCR")
    [[ $r == "$SHA_INCR" ]] || bench_die "SCRIPT LOAD on ${SERVERS[s]} answered '$r', expected $SHA_INCR"
    r=$(cli "$port" script load "$SCRIPT_10")
    [[ $r == "$SHA_10" ]] || bench_die "SCRIPT LOAD on ${SERVERS[s]} answered '$r', expected $SHA_10"
    r=$(cli "$port" function load "$LIBRARY")
    [[ $r == benchlib ]] || bench_die "FUNCTION LOAD on ${SERVERS[s]} answered '$r'"
    r=$(cli "$port" evalsha "$SHA_10" 1 checkkey 7)
    [[ $r == 7 ]] || bench_die "EVALSHA (10 commands) on ${SERVERS[s]} answered '$r'"
    r=$(cli "$port" fcall incr1 1 checkkey)
    [[ $r == 8 ]] || bench_die "FCALL incr1 on ${SERVERS[s]} answered '$r'"
    r=$(cli "$port" fcall cmd10 1 checkkey 7)
    [[ $r == 7 ]] || bench_die "FCALL cmd10 on ${SERVERS[s]} answered '$r'"
    errs0=$(info_field "$port" stats total_error_replies)
    for w in $WORKLOADS; do
      run_one "$round" "$s" "$w" "$port" "$pid"
      bench_log "  round $round ${BENCH_LABELS[s]} $w: $(tail -n 1 "$RAWF" | cut -d, -f5) rps, $(tail -n 1 "$RAWF" | cut -d, -f10) us/req"
    done
    errs1=$(info_field "$port" stats total_error_replies)
    [[ $errs0 == "$errs1" ]] || bench_die "${SERVERS[s]} sent $((errs1 - errs0)) error replies during the runs"
    bench_stop_server "$pid"
  done
done

# ---- summary -----------------------------------------------------------------
med() { # workload server column
  awk -F, -v w="$1" -v s="$2" -v c="$3" 'NR > 1 && $2 == w && $3 == s {print $c}' "$RAWF" | bench_median
}
echo
{
  printf "workload"
  for ((s = 0; s < NS; s++)); do printf "\t%s_rps" "${BENCH_LABELS[s]}"; done
  for ((s = 1; s < NS; s++)); do printf "\t%s/%s_rps" "${BENCH_LABELS[s]}" "${BENCH_LABELS[0]}"; done
  for ((s = 0; s < NS; s++)); do printf "\t%s_cpu_us/req" "${BENCH_LABELS[s]}"; done
  for ((s = 1; s < NS; s++)); do printf "\t%s/%s_cpu" "${BENCH_LABELS[s]}" "${BENCH_LABELS[0]}"; done
  printf "\n"
  for w in $WORKLOADS; do
    printf "%s" "$w"
    rps=()
    cpu=()
    for ((s = 0; s < NS; s++)); do rps+=("$(med "$w" "${BENCH_LABELS[s]}" 5)"); printf "\t%.0f" "${rps[s]}"; done
    for ((s = 1; s < NS; s++)); do awk -v a="${rps[s]}" -v b="${rps[0]}" 'BEGIN {printf "\t%.3f", (b > 0 ? a / b : 0)}'; done
    for ((s = 0; s < NS; s++)); do cpu+=("$(med "$w" "${BENCH_LABELS[s]}" 10)"); printf "\t%.3f" "${cpu[s]}"; done
    for ((s = 1; s < NS; s++)); do awk -v a="${cpu[s]}" -v b="${cpu[0]}" 'BEGIN {printf "\t%.3f", (b > 0 ? a / b : 0)}'; done
    printf "\n"
  done
} | column -t -s $'\t'
echo
echo "# per-round ratios to ${BENCH_LABELS[0]} (rps, cpu/req) -- spread check"
awk -F, -v base="${BENCH_LABELS[0]}" 'NR > 1 {k = $1 SUBSEP $2 SUBSEP $3; rps[k] = $5; cpu[k] = $10
         if (!(($2 SUBSEP $3) in seen)) {seen[$2 SUBSEP $3] = 1; order[++n] = $2 SUBSEP $3}
         if ($1 > rounds) rounds = $1}
       END {
         for (i = 1; i <= n; i++) {
           split(order[i], a, SUBSEP); if (a[2] == base) continue
           line = sprintf("%-18s %-10s", a[1], a[2])
           for (r = 1; r <= rounds; r++) {
             kb = r SUBSEP a[1] SUBSEP base; ks = r SUBSEP a[1] SUBSEP a[2]
             line = line sprintf("  r%d %.2f/%.2f", r, (rps[kb] > 0 ? rps[ks] / rps[kb] : 0), (cpu[kb] > 0 ? cpu[ks] / cpu[kb] : 0))
           }
           print line
         }
       }' "$RAWF"
echo
echo "# medians: server / client core utilisation (cpu-s / wall-s; client ~1.00 = load generator saturated),"
echo "# other = cores used by other processes on the machine during the run (noise indicator)"
{
  printf "workload"
  for ((s = 0; s < NS; s++)); do printf "\t%s_srv\t%s_cli\t%s_other\t%s_p50_ms\t%s_p99_ms" "${BENCH_LABELS[s]}" "${BENCH_LABELS[s]}" "${BENCH_LABELS[s]}" "${BENCH_LABELS[s]}" "${BENCH_LABELS[s]}"; done
  printf "\n"
  for w in $WORKLOADS; do
    printf "%s" "$w"
    for ((s = 0; s < NS; s++)); do
      printf "\t%s\t%s\t%s\t%s\t%s" "$(med "$w" "${BENCH_LABELS[s]}" 11)" "$(med "$w" "${BENCH_LABELS[s]}" 12)" \
        "$(med "$w" "${BENCH_LABELS[s]}" 13)" "$(med "$w" "${BENCH_LABELS[s]}" 7)" "$(med "$w" "${BENCH_LABELS[s]}" 8)"
    done
    printf "\n"
  done
} | column -t -s $'\t'
echo
echo "# memory (median over rounds): fresh = 1 s after start, never ran a script; after_eval = after one EVAL"
{
  printf "server\tused_memory_fresh\trss_kB_fresh\tvm_total_fresh\tused_memory_after_eval\trss_kB_after_eval\tvm_total_after_eval\n"
  for ((s = 0; s < NS; s++)); do
    printf "%s" "${BENCH_LABELS[s]}"
    for c in 3 4 5 6 7 8; do
      printf "\t%s" "$(awk -F, -v s="${BENCH_LABELS[s]}" -v c="$c" 'NR > 1 && $2 == s {print $c}' "$MEMF" | bench_median)"
    done
    printf "\n"
  done
} | column -t -s $'\t'
echo
echo "# per-round rps (spread check)"
awk -F, 'NR > 1 {k = $2 " " $3; v[k] = v[k] " " sprintf("%.0f", $5); if (!(k in seen)) {seen[k] = 1; order[++n] = k}}
         END {for (i = 1; i <= n; i++) printf "%-28s %s\n", order[i], v[order[i]]}' "$RAWF"
if [[ -n ${RAW:-} ]]; then cp "$RAWF" "$RAW" && cp "$MEMF" "${RAW%.csv}.mem.csv" && echo "# raw per-run CSV copied to $RAW (memory: ${RAW%.csv}.mem.csv)"; fi
BENCH_OK=1
