#!/usr/bin/env bash
# A ringkv primary/replica pair watched by three redis-sentinel processes,
# on free loopback ports: the steps docs/deploy.md walks through, checked.
#   scripts/pair-demo.sh [path/to/ringkv-server]     (default build/ringkv-server)
# 1. primary and replica (requirepass/masterauth, replica-announce-ip,
#    min-replicas-to-write 1), each from its own config file;
# 2. three sentinels (quorum 2, auth-pass; down-after 1 s so the demo is short);
# 3. writes acknowledged by the replica (WAIT 1 answers 1);
# 4. kill -9 of the primary: the sentinels promote the replica, which holds
#    every acknowledged write;
# 5. the old primary, restarted from its unchanged file, is turned into a
#    replica of the new one by the sentinels and syncs;
# 6. CONFIG REWRITE (sent by the sentinels) left both files saying so: the
#    old primary's has `replicaof <new primary>`, the promoted one's none.
# With PAIR_ACL=1 the pair uses ACL users as docs/deploy.md and
# docs/security.md describe: the replicas authenticate as `replicator`
# (masteruser; +psync +replconf +ping only) and the sentinels as
# `sentinel-user` (`sentinel auth-user`; the commands Sentinel needs, as
# Redis's Sentinel documentation lists them); at the end ACL LOG must be
# empty on both nodes (no command of the replicas or the sentinels refused).
# Exit status 0 when every check holds; 77 (skip) without redis-sentinel.
# About 30 s: the failover takes 2-3 s; Sentinel waits ~10 s by itself
# before it converts the restarted old primary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
server=$(readlink -f "${1:-$root/build/ringkv-server}")
if ! command -v redis-sentinel >/dev/null || ! command -v redis-cli >/dev/null; then
  echo "SKIP: redis-sentinel or redis-cli is not installed (scripts/deps.sh installs redis-sentinel)"
  exit 77
fi
work=$(mktemp -d /tmp/ringkv-pair-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do echo "--- $f" >&2; tail -n 15 "$f" >&2; done
  exit 1
}
# N distinct free TCP ports on 127.0.0.1: the kernel picks them while all N
# sockets are open, so no two are the same (picked one at a time, a port
# closed after its pick can be handed out again: two sentinels once got one).
free_ports() {
  python3 -c 'import socket,sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}
pass=demo-secret
acl=${PAIR_ACL:-0}
repl_pass=replicator-secret sentinel_pass=sentinel-secret
cli() { redis-cli -h 127.0.0.1 -p "$1" -a "$pass" --no-auth-warning "${@:2}"; }
scli() { redis-cli -h 127.0.0.1 -p "$1" "${@:2}"; }
# wait_for SECONDS DESCRIPTION COMMAND...: polls every 0.1 s.
wait_for() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out waiting for: $what"
    sleep 0.1
  done
}

read -r p1 p2 s1 s2 s3 <<<"$(free_ports 5)"
echo "primary 127.0.0.1:$p1, replica 127.0.0.1:$p2, sentinels $s1 $s2 $s3 (in $work)"

# 1. The data nodes: the same file but for the port, dir and replicaof.
node_conf() {  # node_conf NAME PORT [replicaof-port]
  mkdir -p "$work/$1"
  cat >"$work/$1.conf" <<CONF
bind 127.0.0.1
port $2
dir $work/$1
logfile $work/$1.log
save ""
appendonly yes
requirepass $pass
replica-announce-ip 127.0.0.1
min-replicas-to-write 1
min-replicas-max-lag 10
CONF
  if [[ $acl == 1 ]]; then
    cat >>"$work/$1.conf" <<CONF
user replicator on >$repl_pass +psync +replconf +ping
user sentinel-user on >$sentinel_pass allchannels +multi +slaveof +ping +exec +subscribe +config|rewrite +role +publish +info +client|setname +client|kill +script|kill
masteruser replicator
masterauth $repl_pass
CONF
  else
    echo "masterauth $pass" >>"$work/$1.conf"
  fi
  [[ -z ${3:-} ]] || echo "replicaof 127.0.0.1 $3" >>"$work/$1.conf"
}
start_node() { "$server" "$work/$1.conf" & pids+=($!); eval "pid_$1=$!"; }
node_conf a "$p1"
node_conf b "$p2" "$p1"
start_node a
start_node b
wait_for 10 "primary answers" sh -c "[ \"\$(redis-cli -p $p1 -a $pass --no-auth-warning ping)\" = PONG ]"
wait_for 10 "replica in sync" sh -c "redis-cli -p $p2 -a $pass --no-auth-warning info replication | grep -q master_link_status:up"

# 2. Three sentinels, quorum 2.
for s in "$s1" "$s2" "$s3"; do
  cat >"$work/sentinel-$s.conf" <<CONF
port $s
bind 127.0.0.1
dir $work
logfile $work/sentinel-$s.log
sentinel announce-ip 127.0.0.1
sentinel monitor pair 127.0.0.1 $p1 2
$(if [[ $acl == 1 ]]; then
    echo "sentinel auth-user pair sentinel-user"
    echo "sentinel auth-pass pair $sentinel_pass"
  else
    echo "sentinel auth-pass pair $pass"
  fi)
sentinel down-after-milliseconds pair 1000
sentinel failover-timeout pair 4000
sentinel parallel-syncs pair 1
CONF
  redis-sentinel "$work/sentinel-$s.conf" & pids+=($!)
done
for s in "$s1" "$s2" "$s3"; do
  wait_for 15 "sentinel $s sees the replica and 2 other sentinels" sh -c \
    "[ \"\$(redis-cli -p $s sentinel master pair | sed -n '/^num-other-sentinels\$/{n;p}')\" = 2 ] &&
     [ \"\$(redis-cli -p $s sentinel master pair | sed -n '/^num-slaves\$/{n;p}')\" = 1 ]"
done

# 3. Writes the replica acknowledged.
for i in $(seq 1 50); do
  out=$(cli "$p1" set "key:$i" "value:$i")
  [[ $out == OK ]] || fail "SET key:$i: $out"
done
acked=$(cli "$p1" wait 1 2000)
[[ $acked == 1 ]] || fail "WAIT 1 answered $acked"
echo "50 writes acknowledged by the replica (WAIT 1 -> $acked)"

# 4. kill -9 the primary; the sentinels fail over to the replica.
kill -9 "$pid_a"
wait "$pid_a" 2>/dev/null || true
t0=$SECONDS
wait_for 30 "sentinels promote 127.0.0.1:$p2" sh -c \
  "redis-cli -p $s1 sentinel get-master-addr-by-name pair | grep -qx $p2 &&
   redis-cli -p $p2 -a $pass --no-auth-warning role | head -1 | grep -qx master"
echo "failover done in $((SECONDS - t0)) s: 127.0.0.1:$p2 is the primary"
for i in $(seq 1 50); do
  v=$(cli "$p2" get "key:$i")
  [[ $v == "value:$i" ]] || fail "key:$i on the new primary is '$v'"
done
echo "all 50 acknowledged writes are on the new primary"

# 5. The old primary restarts from its file (still a primary there); the
# sentinels turn it into a replica of the new primary.
start_node a
wait_for 30 "old primary rejoins as a replica of $p2" sh -c \
  "redis-cli -p $p1 -a $pass --no-auth-warning info replication | grep -q master_port:$p2 &&
   redis-cli -p $p1 -a $pass --no-auth-warning info replication | grep -q master_link_status:up"
[[ $(cli "$p1" get key:50) == value:50 ]] || fail "the old primary did not sync"
wait_for 10 "new primary accepts writes again (min-replicas-to-write 1)" sh -c \
  "[ \"\$(redis-cli -p $p2 -a $pass --no-auth-warning set after failover)\" = OK ]"
[[ $(cli "$p2" wait 1 2000) == 1 ]] || fail "WAIT 1 after the old primary rejoined"
echo "127.0.0.1:$p1 is a replica of 127.0.0.1:$p2 and in sync"

# 6. Both files persist the roles (CONFIG REWRITE sent by the sentinels).
grep -qx "replicaof 127.0.0.1 $p2" "$work/a.conf" || fail "a.conf lacks 'replicaof 127.0.0.1 $p2'"
! grep -q '^replicaof' "$work/b.conf" || fail "b.conf still has a replicaof line"
echo "config files: a.conf has 'replicaof 127.0.0.1 $p2', b.conf has no replicaof"

# 7. With ACL users: nothing the replicas or the sentinels sent was refused,
# and CONFIG REWRITE kept the users.
if [[ $acl == 1 ]]; then
  for p in "$p1" "$p2"; do
    denied=$(cli "$p" acl log)
    [[ -z $denied ]] || fail "ACL LOG on 127.0.0.1:$p is not empty: $denied"
  done
  for f in a b; do
    grep -q '^user sentinel-user ' "$work/$f.conf" || fail "$f.conf lost the user sentinel-user"
    grep -Eqx 'masteruser "?replicator"?' "$work/$f.conf" || fail "$f.conf lost masteruser"
  done
  echo "ACL users: sentinel-user and replicator were never refused (ACL LOG empty), both files keep them"
fi
echo "PASS: pair with Sentinel$([[ $acl == 1 ]] && echo ", ACL users") ($((SECONDS)) s)"
