#!/usr/bin/env bash
# Builds semroute and runs the whole test suite: ctest (unit, CLI, ABI,
# fuzz replay, examples), then the install tree with its C, C++, Go and
# Python consumers, the Go package's tests under the race detector and the
# Python package's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh  # the test tools quickstart.sh leaves out (Go, redis, clang, pytest); idempotent
./scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)"
./scripts/test-install.sh
