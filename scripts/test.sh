#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   1. Release build: the integration tests (ctest), including the
#      differential tests against Debian's redis-server.
#   2. ASan + UBSan build: the integration tests of 1 (not the "deploy"
#      ones: packaging and sentinel scripts, no server code of their own to
#      check), then the unit tests. The unit tests are built and run here
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
# leave (docs/performance.md 30.1). It builds the server first: pass 2's
# integration tests start as soon as it and pass 1 are done, and the unit
# tests compile beside them, at the same priority (33.1).
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
asan_pid=""
if ! build release release; then
  asan=0  # its e2e harnesses are the release build's
else
  if ((asan)); then
    # The ASan pass runs the release build's e2e harnesses against its own
    # server rather than compile them again (they share no code with the
    # server).
    export HARNESSES_FROM=$PWD/build
    [[ ${SKIP_EPOLL:-0} != 1 ]] && export BACKEND_TESTS_IO=epoll
    # Built in two parts, one after the other: the server (all the
    # integration tests need of this build), then the rest (the unit tests).
    # Each part leaves <part>.log, and <part>.done ("<end epoch s> <rc>")
    # when it ends, which may be before it is waited for.
    asan_dir=$(mktemp -d)
    asan_t0=$(date +%s)
    echo "=== asan+ubsan: build (in the background, logs shown when each part ends)"
    (
      part() {  # name build.sh-args...
        local name=$1 rc
        shift
        nice -n 19 ionice -c 3 scripts/build.sh asan "$@" >"$asan_dir/$name.log" 2>&1
        rc=$?
        echo "$(date +%s) $rc" >"$asan_dir/$name.tmp" && mv "$asan_dir/$name.tmp" "$asan_dir/$name.done"
        return "$rc"
      }
      part server ringkv-server && part rest
    ) &
    asan_pid=$!
  fi
  run_tests release build $((cores * 2))
  if ((!asan)) && [[ ${SKIP_EPOLL:-0} != 1 ]]; then
    export RINGKV_TEST_IO_BACKEND=epoll
    run_tests "release, epoll backend" build $((cores * 2)) -L backend
    unset RINGKV_TEST_IO_BACKEND
  fi
fi

asan_part() {  # name what: waits for a part of the ASan build; false if it failed
  local name=$1 what=$2 end rc
  while [[ ! -e $asan_dir/$name.done ]] && kill -0 "$asan_pid" 2>/dev/null; do sleep 1; done
  end=$(date +%s) rc=1  # unless the part said otherwise: it died without a word
  [[ -e $asan_dir/$name.done ]] && read -r end rc <"$asan_dir/$name.done"
  echo "=== asan+ubsan: build log ($what)"
  cat "$asan_dir/$name.log" 2>/dev/null
  summary+=("asan+ubsan: $what built, ended $((end - start_epoch)) s into the run ($((end - asan_t0)) s after the build's start)")
  if ((rc != 0)); then
    summary+=("asan+ubsan: BUILD FAILED ($what)")
    status=1
    return 1
  fi
}
if ((asan)); then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # The integration tests start once the server is built; the unit tests
  # compile beside them at the lowest priority, as the build did beside the
  # release tests: the integration tests leave part of the two cores idle,
  # waiting on their servers (docs/performance.md 33.1).
  if asan_part server "the server"; then
    run_tests "asan+ubsan, integration" build-asan $((cores * 3 / 2)) -LE 'deploy|unit'
    asan_part rest "the unit tests" && run_tests "asan+ubsan, unit" build-asan $((cores * 3 / 2)) -L unit
  fi
  wait "$asan_pid"
  rm -rf "$asan_dir"
fi

echo
echo "=== summary ($((SECONDS - start)) s)"
printf '  %s\n' "${summary[@]}"
exit $status
