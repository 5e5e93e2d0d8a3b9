#!/usr/bin/env bash
# Start-up, load and memory at real model sizes (random weights): a
# ModernBERT-base classifier and a Qwen3-Embedding-0.6B-sized embedder, each
# in a fresh process through dlopen (benchmarks/startup_bench.cpp), plus the
# time of `semroute version`. Needs a build with -DSEMROUTE_BUILD_BENCHMARKS=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
work=/tmp  # where the benchmarks keep their random checkpoints
tokenizer=tests/data/tokenizers/modernbert/tokenizer.json
[ -f "$work/semroute-bench-modernbert-base/model.safetensors" ] ||
  "$build/cli/semroute" make-model modernbert-base "$work/semroute-bench-modernbert-base" --labels math,law,biology,other \
    --tokenizer "$tokenizer" >/dev/null
# The embedding benchmark writes its Qwen3-sized checkpoint on first use.
[ -f "$work/semroute-bench-qwen3-embedding-0.6b/model.safetensors" ] ||
  "$build/benchmarks/semroute_embedding_bench" --preset qwen3-embedding-0.6b --lengths 16 --batches 1 >/dev/null
lib="$build/capi/libsemroute.so"
"$build/benchmarks/semroute_startup_bench" "$lib" "$work/semroute-bench-modernbert-base"
# Its random checkpoint has a 32 000-token vocabulary: the BERT tokenizer fits it.
"$build/benchmarks/semroute_startup_bench" "$lib" "$work/semroute-bench-qwen3-embedding-0.6b" embedding \
  tests/data/tokenizers/bert/tokenizer.json
start=$(date +%s%N)
for _ in 1 2 3 4 5 6 7 8 9 10; do "$build/cli/semroute" version >/dev/null; done
echo "semroute version: $(( ($(date +%s%N) - start) / 10000000 )) ms per run (mean of 10)"
