#!/usr/bin/env bash
# Sidecar against in process (docs/serve.md "Speed"): starts `semroute serve`
# on a model (default: the default domain model; --base: a ModernBERT-base
# shape with random weights), then runs servebench. Both sides as configured
# by default (the sidecar batches what queues while it computes; in process,
# no batching); --batched: both with max_batch 8, max_wait_us 1000. On
# demand, not in CI.
#   benchmarks/serve/run.sh [--base] [--batched] [SECONDS per cell, split over 3 rounds]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=$(realpath "${BUILD_DIR:-build}")
cli=$build/cli/semroute
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
model=$root/models/domain
if [ "${1:-}" = "--base" ]; then
  shift
  "$cli" make-model modernbert-base "$work/base" --labels a,b --tokenizer tests/data/tokenizers/modernbert/tokenizer.json >/dev/null
  model=$work/base
fi
batching="" batch=0
if [ "${1:-}" = "--batched" ]; then
  shift
  batching=", max_batch: 8, max_wait_us: 1000" batch=8
fi
seconds=${1:-5}
printf 'listen: 127.0.0.1:0\nunix_socket: %s/serve.sock\nlimits: {result_cache_entries: 0}\nmodels:\n  bench: {path: %s%s}\n' \
  "$work" "$model" "$batching" >"$work/serve.yaml"
"$cli" serve "$work/serve.yaml" >"$work/out" &
server=$!
for _ in $(seq 100); do grep -q listening "$work/out" 2>/dev/null && break; sleep 0.1; done
tcp=$(awk '{print $2}' "$work/out")
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
  "AVX-512: $(grep -q avx512f /proc/cpuinfo && echo yes || echo no); model: $model"
cd benchmarks/serve
PKG_CONFIG_PATH=${PKG_CONFIG_PATH:-$build/pkgconfig} go run . -model "$model" -tcp "$tcp" -unix "$work/serve.sock" -seconds "$seconds" -batch "$batch"
