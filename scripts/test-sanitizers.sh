#!/usr/bin/env bash
# Builds semroute with AddressSanitizer + UndefinedBehaviorSanitizer in
# ./build-asan and runs the whole test suite under them (leak checks on), the
# unit tests in a few processes (scripts/test-shards.sh says why).
set -euo pipefail
cd "$(dirname "$0")/.."
# -O1 -g1: fast to compile, still line numbers in every report.
BUILD_DIR=build-asan ./scripts/build.sh -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
  "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1" "-DSEMROUTE_SANITIZE=address;undefined"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
./scripts/test-shards.sh build-asan
