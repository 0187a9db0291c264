#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   1. Release build: unit and integration tests (ctest), including the
#      differential tests against Debian's redis-server.
#   2. ASan + UBSan build: the same tests again.
# Prints a summary and exits non-zero on any failure.
#   SKIP_ASAN=1 scripts/test.sh    only the release pass (a quick local run)
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
start=$SECONDS
status=0
summary=()

run_pass() {  # name build-kind build-dir
  local name=$1 kind=$2 dir=$3
  echo "=== $name: build"
  if ! scripts/build.sh "$kind"; then
    summary+=("$name: BUILD FAILED")
    status=1
    return
  fi
  echo "=== $name: ctest"
  local log
  log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure -j 2 --timeout 300) 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  summary+=("$name: $(grep -E 'tests passed|tests failed' "$log" | tail -1)")
  rm -f "$log"
  ((rc == 0)) || status=1
}

run_pass "release" release build
if [[ ${SKIP_ASAN:-0} != 1 ]]; then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_pass "asan+ubsan" asan build-asan
fi

echo
echo "=== summary ($((SECONDS - start)) s)"
printf '  %s\n' "${summary[@]}"
exit $status
