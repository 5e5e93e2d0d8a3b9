#!/usr/bin/env bash
# Runs a build's whole test suite with the unit tests in a few long-lived
# processes instead of one process per test, as ctest runs them. Under the
# sanitizers a process costs ~1.5 s to start (libtorch, shadow memory, the
# leak scan at exit), more than most unit tests take: one process per test
# spent a third of the sanitizer run starting up. The unit tests run in
# $(nproc) gtest shards side by side, then ctest runs every other test (the
# CLI, server, stress, fuzz-corpus and repository checks: label "unit"
# excluded). The unit tests stay independent of their order and of the
# process they share (scripts/test.sh runs each in its own).
#   scripts/test-shards.sh BUILD_DIR [CTEST OPTIONS...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=$1
shift
shards=$(nproc)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for ((i = 0; i < shards; i++)); do
  # The environment ctest gives each unit test (tests/CMakeLists.txt).
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i GTEST_BRIEF=1 SEMROUTE_NUM_THREADS=2 \
    "$build_dir/tests/semroute_unit_tests" >"$logs/shard-$i.log" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < shards; i++)); do
  if wait "${pids[$i]}"; then
    echo "unit tests, shard $((i + 1)) of $shards: $(grep -E '^\[==========\]' "$logs/shard-$i.log" | tail -1)"
  else
    echo "unit tests, shard $((i + 1)) of $shards: FAILED"
    # Brief output prints each failure where it happens, not in the summary:
    # show the failures themselves, then how the shard ended.
    grep -E -B2 -A15 ': Failure$|^\[  FAILED  \]' "$logs/shard-$i.log" | head -400 || true
    tail -20 "$logs/shard-$i.log"
    status=1
  fi
done
ctest --test-dir "$build_dir" --output-on-failure --parallel "$shards" --label-exclude unit "$@" || status=1
exit $status
