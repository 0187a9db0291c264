# The Lua of the scripting workloads, sourced by perf/scripting_bench.sh
# (the side-by-side figures) and perf/profile_workload.sh (the profiles), so
# that both run the same code: SCRIPT_INCR (one INCR), BODY10 (ten commands
# on one key: SET, INCRs, GETs) and LIBRARY (both as functions incr1 and
# cmd10 of library benchlib).
# shellcheck shell=bash
SCRIPT_INCR="return redis.call('INCR', KEYS[1])"
BODY10="local k = KEYS[1]
redis.call('SET', k, ARGV[1])
redis.call('INCR', k)
redis.call('INCR', k)
redis.call('GET', k)
redis.call('INCR', k)
redis.call('INCR', k)
redis.call('GET', k)
redis.call('INCR', k)
redis.call('SET', k, ARGV[1])
return redis.call('GET', k)"
LIBRARY="#!lua name=benchlib
redis.register_function('incr1', function(keys, args) return redis.call('INCR', keys[1]) end)
redis.register_function('cmd10', function(KEYS, ARGV)
$BODY10
end)"
