#!/bin/bash
# perf/wait_offcpu.sh BIN [C] [N]: WAIT 10 1 load from redis-benchmark (CPU 0) on a server (CPU 1);
# perf sched records 3 s in the middle of the run; per task: run time, off-CPU sleeping (wait) and
# runnable-but-not-running (sch delay) from perf sched timehist, and the server's deadline lateness.
BIN=$1; C=${2:-2000}; N=${3:-400000}; PORT=$((20000 + RANDOM % 10000))
ulimit -n 16384
taskset -c 1 $BIN --port $PORT --save "" --appendonly no --maxclients $((C + 64)) --enable-debug-command yes >/dev/null 2>&1 &
SP=$!; sleep 0.5
taskset -c 0 redis-benchmark -p $PORT -q -c $C -n $N wait 10 1 > /tmp/waitsched.bench.$$ 2>&1 &
BP=$!
sleep 2
perf sched record -a -o /tmp/waitsched.data.$$ -- sleep 3 >/dev/null 2>&1
wait $BP
tr '\r' '\n' < /tmp/waitsched.bench.$$ | grep -a 'requests per second' | tail -1
redis-cli -p $PORT debug deadline-lateness 2>/dev/null | head -10 | tr '\n' ' '; echo
perf sched timehist -i /tmp/waitsched.data.$$ 2>/dev/null | awk -v s=$SP -v b=$BP '
  $3 ~ "\\[" s "\\]$" || $3 ~ "\\[" b "\\]$" || $3 ~ "/" s "\\]$" {
    name = ($3 ~ s "\\]$") ? "server" : "redis-benchmark"; n[name]++; w[name] += $4; d[name] += $5; r[name] += $6 }
  END { for (k in n) printf "%-16s switches %6d  run %7.1f ms  off-cpu(sleep) %7.1f ms  sch-delay %7.1f ms  avg-sleep %.3f ms avg-run %.3f ms\n", k, n[k], r[k], w[k], d[k], w[k]/n[k], r[k]/n[k] }'
kill $SP; wait $SP 2>/dev/null
rm -f /tmp/waitsched.bench.$$ /tmp/waitsched.data.$$
