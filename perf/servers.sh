# Sourced by the perf/ scripts: starting servers pinned to CPU 1.
# The caller defines `pids=()` (every started server is appended) and may set
# SERVER_EXTRA=(...) for arguments every server gets.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_server CMD DIR PORT [ARGS...]: starts CMD (split like a shell word
# list) on CPU 1 in DIR without persistence, waits for PING.
start_server() {
  local argv cmd=$1 dir=$2 port=$3
  shift 3
  eval "argv=($cmd)"
  mkdir -p "$dir"
  taskset -c 1 "${argv[@]}" --port "$port" --dir "$dir" --save "" --appendonly no --bind 127.0.0.1 \
    "${SERVER_EXTRA[@]}" "$@" >"$dir/log" 2>&1 &
  pids+=($!)
  for _ in $(seq 500); do [[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && return 0; sleep 0.01; done
  echo "server did not start: $cmd" >&2
  return 1
}

# start_tls_server CMD DIR: start_server on two free ports, a plain one and
# a --tls-port (the TLS files come from SERVER_EXTRA); sets `port`, `tport`
# and `pid` (the server's) for the caller.
start_tls_server() {
  port=$(free_port)
  tport=$(free_port)
  start_server "$1" "$2" "$port" --tls-port "$tport"
  pid=${pids[-1]}
}

# used_memory PORT: INFO's used_memory, in bytes.
used_memory() { redis-cli -p "$1" info memory | awk -F: '/^used_memory:/ {print $2 + 0}'; }

# pipe_and_settle PORT FILE: sends FILE's commands through `redis-cli
# --pipe`, then waits a second for the server to settle (memory scripts).
pipe_and_settle() {
  redis-cli -p "$1" --pipe <"$2" >/dev/null
  sleep 1
}

# cpu_ticks PID: the process's user + system CPU so far, in clock ticks
# (getconf CLK_TCK per second).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# stop_servers: stops every server in `pids` (SIGTERM), waits for them and
# empties the list.
stop_servers() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}

# start_pinned CMD DIR: start_server on a free port; sets `port` and `spid`
# (the server's pid) for the caller, for a perf attached to it.
start_pinned() {
  port=$(free_port)
  start_server "$1" "$2" "$port"
  spid=${pids[-1]}
}

# stop_pinned: stops the server start_pinned started.
stop_pinned() {
  kill "$spid"
  wait "$spid" 2>/dev/null || true
}

# preload_for_get PORT TEST: when the redis-benchmark TEST reads (-t get),
# 100,000 keys of 64 bytes are written first, as issue 24's GET rows
# measure it.
preload_for_get() {
  if [[ " $2 " == *" get "* ]]; then
    redis-benchmark -p "$1" -t set -r 100000 -d 64 -n 200000 -P 16 -q >/dev/null 2>&1
  fi
}

# bench_with_perf N TEST PERF_ARGS...: `perf PERF_ARGS -p $spid` covers the
# whole of `redis-benchmark -c 50 -n N TEST` (CPU 0) against $port, and
# 0.2 s of the idle server before it; sets `rps` (redis-benchmark's).
bench_with_perf() {
  local n=$1 test=$2 ppid
  shift 2
  perf "$@" -p "$spid" >/dev/null 2>&1 &
  ppid=$!
  sleep 0.2
  # shellcheck disable=SC2086
  rps=$(taskset -c 0 redis-benchmark -p "$port" -c 50 -n "$n" $test -q 2>/dev/null | tr '\r' '\n' |
    awk '/requests per second/ {print $2}' | tail -1)
  kill -INT "$ppid"
  wait "$ppid" 2>/dev/null || true
}
