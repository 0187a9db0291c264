#!/bin/bash
# perf/flush_during_snapshot.sh BIN sync|async: 1M keys, a fork-less BGSAVE, FLUSHDB MODE 50 ms into it; the command's time
BIN=$1; MODE=$2; P=$((20000 + RANDOM % 10000)); D=$(mktemp -d)
$BIN --port $P --save "" --appendonly no --snapshot-fork no --enable-debug-command yes --dir $D >/dev/null 2>&1 &
SP=$!; sleep 0.5
redis-cli -p $P debug populate 1000000 key 64 >/dev/null
redis-cli -p $P bgsave >/dev/null; sleep 0.05
s=$(date +%s%N); redis-cli -p $P flushdb $MODE >/dev/null; e=$(date +%s%N)
while [[ $(redis-cli -p $P info persistence | grep -a rdb_bgsave_in_progress) == *1* ]]; do sleep 0.05; done
echo "$(basename $BIN) flushdb $MODE: $(( (e - s) / 1000 )) us; bgsave status $(redis-cli -p $P info persistence | grep -a rdb_last_bgsave_status | tr -d '\r'); rdb keys $(redis-check-rdb $D/dump.rdb 2>/dev/null | grep -a 'keys read' | tr -d '\r')"
kill $SP; wait $SP 2>/dev/null; rm -rf $D
