#!/usr/bin/env bash
# Installs what is missing, builds, and starts ringkv on 127.0.0.1:6379 in the
# foreground.  Extra arguments are passed to the server:
#   scripts/run.sh                      default config
#   scripts/run.sh --io-threads 2       any redis.conf directive as --name value
#   RINGKV_CONF=scripts/ringkv.conf scripts/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh release
args=()
[[ -n ${RINGKV_CONF:-} ]] && args+=("$RINGKV_CONF")
exec build/ringkv-server "${args[@]}" --bind 127.0.0.1 --port 6379 "$@"
