# Sourced by perf/streams_bench.sh and perf/bitmaps_bench.sh: runs named
# workloads against each server in turn, interleaved rounds, a fresh server
# per (round, server), and prints medians of requests/s and of server CPU
# microseconds per request (utime+stime of the whole process from
# /proc/PID/stat), with the ratios to the first server.
#
# The caller defines:
#   spec WORKLOAD   -> "REQUESTS|PIPELINE|TOOL|ARGS..." where TOOL is rb
#                      (redis-benchmark, ARGS the command words), lean
#                      (build/perf/lean_load, ARGS its options and the words)
#                      or consumer (build/perf/stream_consumer_load, ARGS its
#                      options)
#   prefill PORT    -> loads the data the workloads read (may be empty)
#   WORKLOADS, CLIENTS, KEYSPACE, ROUNDS, NAME (the script's name)
# Servers run on CPU 1, the load generator on CPU 0 (perf/servers.sh).
set -f  # workload words such as `*` are passed unquoted: no globbing
LEAN_LOAD=${LEAN_LOAD:-$(dirname "${BASH_SOURCE[0]}")/../build/perf/lean_load}
CONSUMER_LOAD=${CONSUMER_LOAD:-$(dirname "${BASH_SOURCE[0]}")/../build/perf/stream_consumer_load}
work=$(mktemp -d /tmp/wl-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/servers.sh"

# load PORT REQUESTS PIPELINE TOOL ARGS...: one run; its last CSV line has
# the requests/s second.
load() {
  local port=$1 n=$2 pipe=$3 tool=$4
  shift 4
  case $tool in
    rb) taskset -c 0 redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -P "$pipe" -r "$KEYSPACE" -q --csv "$@" ;;
    lean) taskset -c 0 "$LEAN_LOAD" -p "$port" -c "$CLIENTS" -n "$n" -P "$pipe" "$@" ;;
    consumer) taskset -c 0 "$CONSUMER_LOAD" -p "$port" -c "$CLIENTS" -n "$n" -P "$pipe" "$@" ;;
    *) echo "unknown tool $tool" >&2; exit 2 ;;
  esac
}

run_workloads() {  # SERVER_CMD...
  declare -gA rps cpu srv_util cli_util
  local round i server port spid w n pipe tool args t0 t1 r wall cu cs hz
  hz=$(getconf CLK_TCK)
  for round in $(seq "$ROUNDS"); do
    i=0
    for server in "$@"; do
      i=$((i + 1))
      port=$(free_port)
      start_server "$server" "$work/s$i-r$round" "$port"
      spid=${pids[-1]}
      prefill "$port"
      for w in $WORKLOADS; do
        IFS='|' read -r n pipe tool args <<<"$(spec "$w")"
        t0=$(cpu_ticks "$spid")
        TIMEFORMAT='%R %U %S'
        # shellcheck disable=SC2086
        { time load "$port" "$n" "$pipe" "$tool" $args >"$work/out"; } 2>"$work/time" ||
          { cat "$work/out" "$work/time" >&2; echo "$w failed on $server" >&2; exit 1; }
        t1=$(cpu_ticks "$spid")
        r=$(tail -1 "$work/out" | awk -F'","' '{gsub(/"/, "", $2); print $2}')
        read -r wall cu cs < <(tail -1 "$work/time")
        rps[$w,$i]+="$r "
        cpu[$w,$i]+="$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$n" 'BEGIN { printf "%.3f", t / hz * 1e6 / n }') "
        srv_util[$w,$i]+="$(awk -v t="$((t1 - t0))" -v hz="$hz" -v w="$wall" 'BEGIN { printf "%.2f", t / hz / w }') "
        cli_util[$w,$i]+="$(awk -v u="$cu" -v s="$cs" -v w="$wall" 'BEGIN { printf "%.2f", (u + s) / w }') "
        echo "  round $round $(basename "${server%% *}") $w: $r rps" >&2
      done
      redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
      wait "$spid" 2>/dev/null || true
    done
  done
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END { print a[int((NR + 1) / 2)] }'; }

print_table() {  # SERVER_CMD...
  local w i m c first_r first_c last_r last_c
  printf "# %s %s rounds=%d clients=%d keyspace=%d, load %s, %s cpus\n" "$NAME" "$(date -u +%FT%TZ)" "$ROUNDS" \
    "$CLIENTS" "$KEYSPACE" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"
  for i in $(seq $#); do printf "# S%d: %s\n" "$i" "${!i}"; done
  printf "| workload |"
  for i in $(seq $#); do printf " S%d rps | S%d CPU us/req |" "$i" "$i"; done
  printf " rps S%d/S1 | CPU/req S%d/S1 |" "$#" "$#"
  for i in $(seq $#); do printf " S%d srv/cli util |" "$i"; done
  printf "\n|---|"
  for i in $(seq $#); do printf -- "---|---|"; done
  printf -- "---|---|"
  for i in $(seq $#); do printf -- "---|"; done
  printf "\n"
  for w in $WORKLOADS; do
    printf "| %s |" "$w"
    first_r="" first_c=""
    for i in $(seq $#); do
      m=$(median <<<"${rps[$w,$i]}")
      c=$(median <<<"${cpu[$w,$i]}")
      printf " %.0f | %s |" "$m" "$c"
      [[ -z $first_r ]] && first_r=$m first_c=$c
      last_r=$m last_c=$c
    done
    printf " %.2f | %.2f |" "$(awk -v a="$last_r" -v b="$first_r" 'BEGIN { print a / b }')" \
      "$(awk -v a="$last_c" -v b="$first_c" 'BEGIN { print (b > 0 ? a / b : 0) }')"
    for i in $(seq $#); do
      printf " %s / %s |" "$(median <<<"${srv_util[$w,$i]}")" "$(median <<<"${cli_util[$w,$i]}")"
    done
    printf "\n"
  done
}
