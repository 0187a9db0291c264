#!/usr/bin/env bash
# Memory of collections side by side (issue #6): for each type and each
# server, a fresh server is loaded through redis-cli --pipe and its RSS
# growth is read from /proc (VmRSS after - before), then the ratio to the
# first server is printed.
#   perf/collections_memory.sh SERVER_CMD [SERVER_CMD...]
# Two shapes per type (hash, set, zset, list):
#   small  100,000 keys "k:%07d" of 10 elements each
#          (hash: f0..f9 -> "v%07d"; set: "m:0".."m:9"; zset: members
#          "m:0".."m:9", scores 0..9; list: "e:%07d")
#   big    10 keys of 1,000,000 elements each ("element:%07d"; hashes map
#          it to its index, zsets score it with its index)
# Env: SHAPES ("small big"), TYPES ("hash set zset list").
set -euo pipefail
(($# >= 1)) || { echo "usage: $0 SERVER_CMD..." >&2; exit 2; }
SHAPES=${SHAPES:-"small big"}
TYPES=${TYPES:-"hash set zset list"}
work=$(mktemp -d /tmp/coll-mem.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
source "$(dirname "$0")/servers.sh"

gen() {  # type shape -> RESP on stdout
  python3 - "$1" "$2" <<'PY'
import sys
kind, shape = sys.argv[1], sys.argv[2]
out = sys.stdout.buffer
def cmd(args):
    out.write(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in args))
verb = {"hash": b"HSET", "set": b"SADD", "zset": b"ZADD", "list": b"RPUSH"}[kind]
def items(i, elem):
    if kind == "hash": return [elem, b"%d" % i]
    if kind == "zset": return [b"%d" % i, elem]
    return [elem]
if shape == "small":
    for k in range(100000):
        key = b"k:%07d" % k
        args = [verb, key]
        for i in range(10):
            if kind == "hash": args += [b"f%d" % i, b"v%07d" % k]
            elif kind == "zset": args += [b"%d" % i, b"m:%d" % i]
            elif kind == "set": args.append(b"m:%d" % i)
            else: args.append(b"e:%07d" % k)
        cmd(args)
else:
    for k in range(10):
        key = b"big:%d" % k
        for base in range(0, 1000000, 1000):
            args = [verb, key]
            for i in range(base, base + 1000):
                args += items(i, b"element:%07d" % i)
            cmd(args)
PY
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

printf "# collections_memory.sh %s\n" "$(date -u +%FT%TZ)"
printf "%-6s %-6s %-28s %12s %14s %10s\n" type shape server rss_MiB "B/element" ratio
for shape in $SHAPES; do
  for type in $TYPES; do
    first=""
    i=0
    for server in "$@"; do
      i=$((i + 1))
      port=$(free_port)
      start_server "$server" "$work/$type-$shape-$i" "$port"
      spid=${pids[-1]}
      before=$(rss_kb "$spid")
      gen "$type" "$shape" | taskset -c 0 redis-cli -p "$port" --pipe >/dev/null
      sleep 1  # let background rehashing settle
      after=$(rss_kb "$spid")
      kib=$((after - before))
      elements=$([[ $shape == small ]] && echo 1000000 || echo 10000000)
      [[ -z $first ]] && first=$kib
      printf "%-6s %-6s %-28s %12.1f %14.1f %10.2f\n" "$type" "$shape" "$(basename "${server%% *}")" \
        "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')" \
        "$(awk -v k="$kib" -v n="$elements" 'BEGIN { print k * 1024 / n }')" \
        "$(awk -v a="$kib" -v b="$first" 'BEGIN { print a / b }')"
      redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
      wait "$spid" 2>/dev/null || true
    done
  done
done
