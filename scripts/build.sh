#!/usr/bin/env bash
# Builds ringkv.  scripts/build.sh [release|asan] [target...]  (default
# release, every target)
#   release -> build/       (Release, mimalloc)
#   asan    -> build-asan/  (ASan + UBSan, for the tests)
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
shift $(($# > 0))
targets=("$@")  # e.g. ringkv-server: that and what it needs, nothing else
jobs=${JOBS:-2}
case $kind in
  # UNIT_TESTS=OFF: without the unit tests (scripts/test.sh's release pass,
  # when its ASan pass builds and runs them).
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=Release "-DRINGKV_UNIT_TESTS=${UNIT_TESTS:-ON}") ;;
  # HARNESSES_FROM=<release build folder>: run that build's e2e harnesses
  # instead of compiling them again (tests/CMakeLists.txt; scripts/test.sh).
  # BACKEND_TESTS_IO=epoll: the tests labelled "backend" run their servers on
  # epoll (tests/CMakeLists.txt; scripts/test.sh).
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DRINGKV_SANITIZE=ON "-DRINGKV_HARNESSES_FROM=${HARNESSES_FROM:-}"
                               "-DRINGKV_BACKEND_TESTS_IO=${BACKEND_TESTS_IO:-}") ;;
  *) echo "usage: $0 [release|asan]" >&2; exit 2 ;;
esac
# ccache, when installed, shares objects between checkouts (worktrees) of
# the same sources: paths under the parent folder are hashed relative.
if command -v ccache >/dev/null; then
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)}
fi
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$jobs" ${targets[@]:+--target "${targets[@]}"}
