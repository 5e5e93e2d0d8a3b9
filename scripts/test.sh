#!/usr/bin/env bash
# Builds semroute and runs the whole test suite: ctest (unit, CLI, ABI,
# fuzz replay, examples), then the install tree with its C, C++ and Go
# consumers and the Go package's tests under the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)"
./scripts/test-install.sh
