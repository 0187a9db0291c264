#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   1. Release build: the integration tests (ctest), including the
#      differential tests against Debian's redis-server.
#   2. ASan + UBSan build: the unit tests, and the integration tests of 1
#      (not the "deploy" ones: packaging and sentinel scripts, no server
#      code of their own to check). The unit tests are built and run here
#      only (UNIT_TESTS=OFF for pass 1); its e2e harnesses are the release
#      build's (HARNESSES_FROM), run against its server.
#      The integration tests that exercise the I/O backend (label
#      "backend", tests/CMakeLists.txt) run their servers on epoll here
#      (BACKEND_TESTS_IO=epoll -> RINGKV_TEST_IO_BACKEND, read by
#      tests/e2e/test_server.h and the other harnesses): io_uring, the
#      default, runs in pass 1 and in every other test of this pass.
# Prints a summary and exits non-zero on any failure.
#   SKIP_ASAN=1 scripts/test.sh    only the release build: pass 1 with the
#                                  unit tests, then the "backend" tests
#                                  again on epoll
#   SKIP_EPOLL=1 scripts/test.sh   no test on epoll
# Tests run two per core, in both passes: most of an integration test's time
# is spent waiting on its servers (a release ctest pass uses about 0.4 of the
# cores it is given at one test per core).
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
start=$SECONDS
status=0
summary=()

cores=$(nproc)
run_pass() {  # name build-kind build-dir test-jobs [ctest args...]
  local name=$1 kind=$2 dir=$3 jobs=$4
  shift 4
  echo "=== $name: build"
  local t0=$SECONDS
  if ! scripts/build.sh "$kind"; then
    summary+=("$name: BUILD FAILED")
    status=1
    return
  fi
  local t1=$SECONDS
  [[ $kind == release ]] && release_built=1
  echo "=== $name: ctest"
  local log
  log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 300 "$@") 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  summary+=("$name: $(grep -E 'tests passed|tests failed' "$log" | tail -1)"
            "  (build $((t1 - t0)) s, ctest -j $jobs $((SECONDS - t1)) s)")
  rm -f "$log"
  ((rc == 0)) || status=1
}

[[ ${SKIP_ASAN:-0} == 1 ]] && export UNIT_TESTS=ON || export UNIT_TESTS=OFF
run_pass "release" release build $((cores * 2))
if [[ ${SKIP_ASAN:-0} == 1 && ${SKIP_EPOLL:-0} != 1 ]]; then
  export RINGKV_TEST_IO_BACKEND=epoll
  run_pass "release, epoll backend" release build $((cores * 2)) -L backend
  unset RINGKV_TEST_IO_BACKEND
fi
if [[ ${SKIP_ASAN:-0} != 1 ]]; then
  [[ ${SKIP_EPOLL:-0} != 1 ]] && export BACKEND_TESTS_IO=epoll
  # The ASan pass runs the release build's e2e harnesses against its own
  # server rather than compile them again (they share no code with the
  # server); it compiles its own when the release build did not build.
  [[ -x build/ringkv-server && ${release_built:-0} == 1 ]] && export HARNESSES_FROM=$PWD/build
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_pass "asan+ubsan" asan build-asan $((cores * 2)) -LE deploy
fi

echo
echo "=== summary ($((SECONDS - start)) s)"
printf '  %s\n' "${summary[@]}"
exit $status
