#!/usr/bin/env bash
# Sets up (packages, venv, build) and runs every test:
#   1. Release build: unit tests, ONNX conformance (both sets), Python tests, end-to-end models
#   2. a clang ASan+UBSan build: unit tests, conformance, and a bounded run of every libFuzzer target
# QUICK=1 skips stage 2.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0; failed=0
run_ctest() {  # run_ctest BUILD_DIR LABEL
  local log; log=$(mktemp)
  ctest --test-dir "$1" --output-on-failure 2>&1 | tee "$log"
  local line; line=$(grep -E "tests passed, [0-9]+ tests failed out of" "$log" | tail -1)
  local total f
  total=$(echo "$line" | sed -E 's/.*out of ([0-9]+).*/\1/'); f=$(echo "$line" | sed -E 's/.* ([0-9]+) tests failed.*/\1/')
  if [ -z "$line" ]; then echo "$2: ctest did not finish"; failed=$((failed + 1)); return; fi
  passed=$((passed + total - f)); failed=$((failed + f))
  rm -f "$log"
}

echo "== stage 1: Release build tests"
run_ctest build "release"

if [ "${QUICK:-0}" != "1" ]; then
  echo "== stage 2: ASan + UBSan (clang) build, with the fuzz targets (tests/fuzz/README.md)"
  if CC=clang CXX=clang++ BUILD_DIR=build-asan \
     CMAKE_ARGS="-DPOINTRT_SANITIZE=ON -DPOINTRT_FUZZ=ON -DPOINTRT_BUILD_BENCH=OFF -DPOINTRT_BUILD_PYTHON=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo" \
     scripts/setup.sh; then
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan "asan"
  else
    echo "sanitizer build failed"; failed=$((failed + 1))
  fi
fi

echo
echo "all test stages: ${passed} passed, ${failed} failed"
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
