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
# Pass 2's build runs while pass 1's tests run, at the lowest CPU and I/O
# priority (nice 19, ionice idle): those tests spend much of their time
# waiting on servers and the disk, and the compiler takes only what they
# leave (docs/performance.md 30.1).
# Prints a summary and exits non-zero on any failure.
#   SKIP_ASAN=1 scripts/test.sh    only the release build: pass 1 with the
#                                  unit tests, then the "backend" tests
#                                  again on epoll
#   SKIP_EPOLL=1 scripts/test.sh   no test on epoll
# Tests run two per core (three per two cores in the ASan pass, whose
# servers use more CPU): most of an integration test's time is spent waiting
# on its servers.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
scripts/deps.sh || exit 1
start=$SECONDS
start_epoch=$(date +%s)
status=0
summary=()
cores=$(nproc)

build() {  # name build-kind: builds in the foreground; false on failure
  echo "=== $1: build"
  local t0=$SECONDS
  if ! scripts/build.sh "$2"; then
    summary+=("$1: BUILD FAILED")
    status=1
    return 1
  fi
  summary+=("$1: build $((SECONDS - t0)) s")
}

run_tests() {  # name build-dir test-jobs [ctest args...]
  local name=$1 dir=$2 jobs=$3
  shift 3
  echo "=== $name: ctest"
  local t0=$SECONDS log
  log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 300 "$@") 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  summary+=("$name: $(grep -E 'tests passed|tests failed' "$log" | tail -1)"
            "  (ctest -j $jobs $((SECONDS - t0)) s)")
  rm -f "$log"
  ((rc == 0)) || status=1
}

asan=1
[[ ${SKIP_ASAN:-0} == 1 ]] && asan=0
if ((asan)); then
  export UNIT_TESTS=OFF
else
  export UNIT_TESTS=ON
fi
if ! build release release; then
  asan=0  # its e2e harnesses are the release build's
else
  asan_pid=""
  if ((asan)); then
    # The ASan pass runs the release build's e2e harnesses against its own
    # server rather than compile them again (they share no code with the
    # server).
    export HARNESSES_FROM=$PWD/build
    [[ ${SKIP_EPOLL:-0} != 1 ]] && export BACKEND_TESTS_IO=epoll
    asan_log=$(mktemp)
    asan_end=$(mktemp)  # when the build ended (epoch seconds), which may be before it is waited for
    asan_t0=$(date +%s)
    echo "=== asan+ubsan: build (in the background, log shown when it ends)"
    (
      nice -n 19 ionice -c 3 scripts/build.sh asan >"$asan_log" 2>&1
      rc=$?
      date +%s >"$asan_end"
      exit "$rc"
    ) &
    asan_pid=$!
  fi
  run_tests release build $((cores * 2))
  if ((!asan)) && [[ ${SKIP_EPOLL:-0} != 1 ]]; then
    export RINGKV_TEST_IO_BACKEND=epoll
    run_tests "release, epoll backend" build $((cores * 2)) -L backend
    unset RINGKV_TEST_IO_BACKEND
  fi
  if [[ -n $asan_pid ]]; then
    wait "$asan_pid"
    asan_rc=$?
    echo "=== asan+ubsan: build log"
    cat "$asan_log"
    rm -f "$asan_log"
    ended=$(<"$asan_end")
    rm -f "$asan_end"
    summary+=("asan+ubsan: build $((ended - asan_t0)) s, ended $((ended - start_epoch)) s into the run")
    if ((asan_rc != 0)); then
      summary+=("asan+ubsan: BUILD FAILED")
      status=1
      asan=0
    fi
  fi
fi
if ((asan)); then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_tests asan+ubsan build-asan $((cores * 3 / 2)) -LE deploy
fi

echo
echo "=== summary ($((SECONDS - start)) s)"
printf '  %s\n' "${summary[@]}"
exit $status
