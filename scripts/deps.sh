#!/usr/bin/env bash
# Installs, from Debian's packages, whatever ringkv needs that is missing.
#   scripts/deps.sh          build dependencies and the test tools
# Uses sudo when not run as root. Idempotent: does nothing when all are present.
set -euo pipefail
PACKAGES=(
  build-essential cmake pkg-config
  libssl-dev openssl liburing-dev libsystemd-dev libmimalloc-dev libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev liblzf-dev
  libhiredis-dev liblua5.1-0-dev lua-cjson-dev lua-bitop-dev
  redis-server redis-tools redis-sentinel tcl python3
  python3-redis  # redis-py: the Unix-socket e2e test's client and cluster_client_e2e_test's RedisCluster (run with /usr/bin/python3)
  node-redis     # node-redis 4.5 (and Debian's nodejs): cluster_client_e2e_test's Node.js cluster client (createCluster)
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0
echo "installing: ${missing[*]}" >&2
SUDO=""
[[ $(id -u) == 0 ]] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts redis-server as a service on install; ringkv's tests start
# their own servers on free ports and need nothing listening on 6379.
if command -v systemctl >/dev/null && systemctl is-active --quiet redis-server 2>/dev/null; then
  $SUDO systemctl stop redis-server || true
fi
