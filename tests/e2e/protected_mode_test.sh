#!/usr/bin/env bash
# Protected mode end to end. A non-loopback client is needed, and test traffic
# must stay on this machine, so the test makes its own network namespace and
# gives its `lo` an extra, non-127 address: a client connecting to that address
# is not a loopback peer, yet nothing leaves the namespace.
# Exit 77 (ctest SKIP) where network namespaces are not permitted.
#   protected_mode_test.sh /path/to/ringkv-server
set -u
server=$1
if [[ ${IN_NETNS:-0} != 1 ]]; then
  command -v unshare >/dev/null && command -v ip >/dev/null || exit 77
  IN_NETNS=1 exec unshare --net -- "$0" "$@" 2>/dev/null || exit 77
fi
ip link set lo up || exit 77
ip addr add 10.251.77.1/32 dev lo || exit 77
addr=10.251.77.1
port=7399
fail=0
check() {  # description expected actual
  if [[ $2 == "$3" ]]; then echo "ok   $1"; else echo "FAIL $1: expected [$2] got [$3]"; fail=1; fi
}
# RINGKV_TEST_IO_BACKEND: the server's io-backend (the tests labelled
# "backend", tests/CMakeLists.txt).
backend=()
[[ -n ${RINGKV_TEST_IO_BACKEND:-} ]] && backend=(--io-backend "$RINGKV_TEST_IO_BACKEND")
start() {
  "$server" --port $port --bind 127.0.0.1 $addr "${backend[@]}" "$@" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && return; sleep 0.05; done
  echo "server did not start"; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null; }

start
if ((${#backend[@]})); then
  check "io-backend" "$RINGKV_TEST_IO_BACKEND" "$(redis-cli -p $port config get io-backend | tail -1)"
fi
reply=$(redis-cli -h $addr -p $port ping 2>&1)
check "non-loopback client refused without a password" "DENIED" "$(grep -o '^DENIED' <<<"${reply#*(error) }" || echo "$reply")"
check "loopback client served" "PONG" "$(redis-cli -p $port ping)"
check "CONFIG SET protected-mode no" "OK" "$(redis-cli -p $port config set protected-mode no)"
check "non-loopback client served once protected mode is off" "PONG" "$(redis-cli -h $addr -p $port ping)"
stop

start --requirepass pw
check "with a password, non-loopback clients may connect (and must AUTH)" \
  "NOAUTH Authentication required." "$(redis-cli -h $addr -p $port get k 2>&1 | sed 's/^(error) //')"
check "and AUTH works" "PONG" "$(redis-cli -h $addr -p $port -a pw --no-auth-warning ping)"
stop
exit $fail
