#!/usr/bin/env bash
# SET with the AOF on, appendfsync always against everysec (issue 24: always
# >= 1.5x redis-server's rps and >= 0.9x ringkv's own everysec rate; show
# the fsyncs per second and the writes each one acknowledges).
#
# For each round, binary and policy: a fresh server on CPU 1 with a fresh
# folder (same disk for all), `appendonly yes`, then on CPU 0
#   redis-benchmark -c 50 -P 1 -n N -t set -r 100000 -d 64
# and the server's CPU over the run (/proc/PID/stat). For ringkv binaries,
# DEBUG AOF-FSYNCS before and after gives the fdatasyncs of the run:
# fsyncs/s over the run's wall time, and writes per fsync = N / fsyncs.
# redis-server has no such counter (its fdatasync runs on the main thread
# for `always`; tracing it would slow it), so its columns show "-".
# With -l the load generator is build/perf/lean_load (the same SETs, 64-byte
# values over 100,000 keys): redis-benchmark's one core caps both servers at
# about their everysec rate here, which hides what `always` costs.
# Prints the disk's own append + fdatasync time, one line per run and a table
# of medians.
#   perf/aof_always.sh [-l] [-r ROUNDS] [-n REQUESTS] [-c CLIENTS] BINARY [BINARY...]
#   e.g. perf/aof_always.sh -r 3 /usr/bin/redis-server /tmp/ringkv-old build/ringkv-server
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=3
N=100000
CLIENTS=50
LEAN=0
LEAN_LOAD=${LEAN_LOAD:-build/perf/lean_load}
while getopts "lr:n:c:" opt; do
  case $opt in
    l) LEAN=1 ;;
    r) ROUNDS=$OPTARG ;;
    n) N=$OPTARG ;;
    c) CLIENTS=$OPTARG ;;
    *) echo "usage: $0 [-l] [-r ROUNDS] [-n REQUESTS] [-c CLIENTS] BINARY [BINARY...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($# > 0)) || { echo "usage: $0 [-l] [-r ROUNDS] [-n REQUESTS] [-c CLIENTS] BINARY [BINARY...]" >&2; exit 2; }
# shellcheck source=servers.sh
source perf/servers.sh
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END { print a[int((NR + 1) / 2)] }'; }
pids=()
SERVER_EXTRA=()
work=$(mktemp -d "${TMPDIR:-/tmp}/aof_always.XXXXXX")
trap 'stop_servers; rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)
declare -A runs  # "binary|policy|column" -> space-separated values

fsyncs() {  # PORT: ringkv's count, or "-" for a server without it
  local v
  v=$(redis-cli -p "$1" debug aof-fsyncs 2>/dev/null || true)
  [[ $v =~ ^[0-9]+$ ]] && echo "$v" || echo "-"
}

# The disk's own cost, which bounds `always`: 2,000 appends of 100 bytes,
# each followed by fdatasync, in the folder the servers write to.
sync_us=$(python3 -c '
import os, sys, time
path = os.path.join(sys.argv[1], "fdatasync.probe")
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
t = time.perf_counter()
for _ in range(2000):
    os.write(fd, b"x" * 100)
    os.fdatasync(fd)
print("%.0f" % ((time.perf_counter() - t) / 2000 * 1e6))
os.close(fd); os.unlink(path)' "$work")
echo "# aof_always.sh $(date -u +%FT%TZ) generator=$( ((LEAN)) && echo lean_load || echo redis-benchmark) rounds=$ROUNDS clients=$CLIENTS requests=$N, load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cpus, append + fdatasync ${sync_us} us"
for ((r = 1; r <= ROUNDS; r++)); do
  for bin in "$@"; do
    for policy in always everysec; do
      port=$(free_port)
      dir="$work/$(basename "$bin").$policy.$r"
      start_server "$bin" "$dir" "$port" --appendonly yes --appendfsync "$policy" --enable-debug-command yes
      pid=${pids[-1]}
      # The AOF's first files are written at start: wait for the base.
      sleep 0.5
      f0=$(fsyncs "$port")
      c0=$(cpu_ticks "$pid")
      t0=$(date +%s.%N)
      if ((LEAN)); then
        rps=$(taskset -c 0 "$LEAN_LOAD" -p "$port" -c "$CLIENTS" -n "$N" -P 1 -r 100000 \
          set key:__rand_int__ "$(printf 'v%.0s' {1..64})" | tail -1 | cut -d, -f2 | tr -d '"')
      else
        out=$(taskset -c 0 redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -t set -r 100000 -d 64 -q 2>/dev/null | tr '\r' '\n' | grep -a "requests per second" | tail -1)
        rps=$(awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "requests") print $i}' <<<"$out")
      fi
      t1=$(date +%s.%N)
      c1=$(cpu_ticks "$pid")
      f1=$(fsyncs "$port")
      cpu_us=$(awk -v d=$((c1 - c0)) -v hz="$hz" -v n="$N" 'BEGIN {printf "%.2f", d / hz * 1e6 / n}')
      if [[ $f0 != - && $f1 != - ]]; then
        df=$((f1 - f0))
        per_s=$(awk -v d="$df" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", d / (b - a)}')
        per_fsync=$(awk -v d="$df" -v n="$N" 'BEGIN {printf "%.1f", (d > 0 ? n / d : 0)}')
      else
        per_s=- per_fsync=-
      fi
      echo "  round $r $(basename "$bin") $policy: $rps rps, $cpu_us us/req, fsyncs/s $per_s, writes/fsync $per_fsync"
      key="$bin|$policy"
      runs[$key|rps]+="$rps "
      runs[$key|cpu]+="$cpu_us "
      runs[$key|fps]+="$per_s "
      runs[$key|wpf]+="$per_fsync "
      stop_servers
    done
  done
done

med() { local v=$1; [[ $v == *-* ]] && echo "-" || median <<<"$v"; }
echo
echo "| server | appendfsync | rps | CPU µs/req | fsyncs/s | writes/fsync | rps / first server's (same policy) | always / own everysec |"
echo "|---|---|---|---|---|---|---|---|"
first=$1
for bin in "$@"; do
  for policy in always everysec; do
    key="$bin|$policy"
    rps=$(med "${runs[$key|rps]}")
    base=$(med "${runs[$first|$policy|rps]}")
    ratio=$(awk -v a="$rps" -v b="$base" 'BEGIN {printf "%.2f", a / b}')
    own=-
    if [[ $policy == always ]]; then
      own=$(awk -v a="$rps" -v b="$(med "${runs[$bin|everysec|rps]}")" 'BEGIN {printf "%.2f", a / b}')
    fi
    echo "| $(basename "$bin") | $policy | $rps | $(med "${runs[$key|cpu]}") | $(med "${runs[$key|fps]}") | $(med "${runs[$key|wpf]}") | $ratio | $own |"
  done
done
