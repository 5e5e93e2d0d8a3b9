#!/usr/bin/env bash
# Runs the ctest suite as on a CPU without AVX-512 (an AVX2-only machine),
# on whatever host this is: oneDNN, ATen and semroute's own kernels are each
# capped by their switch. Machines of one kind differ (AVX-512 + AMX on some,
# AVX2 only on others); CI runs both paths on every host. (ONEDNN_MAX_CPU_ISA
# alone also caps semroute's kernels; SEMROUTE_MAX_CPU_ISA says it explicitly.)
# The unit tests run in a few processes (scripts/test-shards.sh), the rest in ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
# On a CPU with nothing above AVX2 (no AVX-512, no AVX-VNNI) the caps change
# nothing: scripts/test.sh has just run these very paths.
if ! grep -qwE 'avx512f|avx_vnni' /proc/cpuinfo; then
  echo "test-avx2.sh: skipped: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) has nothing above AVX2"
  exit 0
fi
export ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 SEMROUTE_MAX_CPU_ISA=avx2
./scripts/test-shards.sh "${BUILD_DIR:-build}" "$@"
