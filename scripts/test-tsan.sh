#!/usr/bin/env bash
# Builds the unit tests that share models, tokenizers and C API handles between
# threads with ThreadSanitizer in ./build-tsan and runs them. libtorch's
# OpenMP and TBB are not instrumented, so compute runs on one thread per call
# (OMP_NUM_THREADS=1) and TBB loops run serially in this build
# (core/parallel.h): every report left is about our own code. The
# ParallelChunks tests make a team of two on purpose: in this build our
# regions run on std::threads (models/parallel_chunks.h), which TSan sees
# start and join, so it checks the team's own handoffs. The two that open an
# OpenMP region of their own (to run ours inside it) are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build-tsan "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
  "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1" -DSEMROUTE_SANITIZE=thread -DSEMROUTE_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-tsan --target semroute_thread_tests capi_stress --parallel "$(nproc)"
export OMP_NUM_THREADS=1 SEMROUTE_NUM_THREADS=1
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
build-tsan/tests/semroute_thread_tests --gtest_filter='*Thread*:*Concurren*:CApi*:Batch*:RouterBudgets*:Serve*:ParallelChunks.*-ParallelChunks.BothPassesRunInsideAParallelRegion:ParallelChunks.BatchesRunAloneAndAPlanningExceptionIsRethrown'
# Every kind of handle shared by many threads, through the C API.
build-tsan/tests/stress/capi_stress models concurrency 16 6
