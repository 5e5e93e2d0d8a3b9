#!/usr/bin/env bash
# semroute against ONNX Runtime on the same random-weight ModernBERT sequence
# classifier: batch 1, fp32 and int8, one interleaved run. On demand, never
# in CI. See docs/speed.md.
#
#   benchmarks/peers/run.sh [--preset modernbert-base] [--lengths 16,64,256,512] [--rounds 2]
#                           [--reps 20] [--threads 2] [--avx2] [--per-channel] [--check-length 300]
#                           [--warmup 3] [--budget 10] [--json-out FILE] [--verbose]
#   benchmarks/peers/run.sh --throughput [--callers 1,8,64] [--seconds 30] [--mix mixed|LENGTH]
#                           [--dtypes float32,int8] [--busy N] [--rounds 2] [--threads 2] [--avx2]
#       N callers in closed loops instead (semroute's C API with its batcher,
#       one ONNX Runtime session through its C API); --busy N keeps N cores
#       busy beside it.
#
# BUILD_DIR (default build) must hold the semroute CLI and semroute_peer_bench
# (cmake -DSEMROUTE_BUILD_BENCHMARKS=ON; cmake --build build --target semroute_launcher semroute_peer_bench).
# WORK_DIR (default /tmp/semroute-peers-PRESET) keeps the model and its ONNX
# exports between runs. PEERS_AVX2=1 is the same as --avx2.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$(cd "$repo" && realpath -m "${BUILD_DIR:-build}")"

preset=modernbert-base lengths=16,64,256,512 rounds=2 reps=20 threads=2 check_length=300
avx2="${PEERS_AVX2:-0}" per_channel=0 extra=() throughput=0 throughput_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --preset) preset="$2"; shift 2 ;;
    --lengths) lengths="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --check-length) check_length="$2"; shift 2 ;;
    --avx2) avx2=1; shift ;;
    --per-channel) per_channel=1; shift ;;
    --budget|--warmup|--json-out) extra+=("$1" "$2"); shift 2 ;;
    --verbose) extra+=("$1"); shift ;;
    --throughput) throughput=1; shift ;;
    --callers|--seconds|--mix|--dtypes|--busy) throughput_args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
work="${WORK_DIR:-/tmp/semroute-peers-$preset}"
python=/usr/bin/python3  # Debian's packages live in the system interpreter

# Dependencies: Debian's torch and onnx for the export, onnxruntime-node from npm.
if ! "$python" -c 'import torch, onnx, numpy' 2>/dev/null; then
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo=sudo
  $sudo apt-get install -y --no-install-recommends python3-torch python3-onnx python3-numpy
fi
wanted=$(node -p "require('$here/package.json').dependencies['onnxruntime-node']")
installed=$(node -p "require('$here/node_modules/onnxruntime-node/package.json').version" 2>/dev/null || true)
if [[ "$installed" != "$wanted" ]]; then
  # The install script only fetches GPU providers; the CPU one ships in the package.
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund)
fi

cli="$build/cli/semroute" bench="$build/benchmarks/semroute_peer_bench"
throughput_bin="$build/benchmarks/semroute_peer_throughput"
arch=$(uname -m); [[ $arch == x86_64 ]] && arch=x64 || arch=arm64
ort_lib="$here/node_modules/onnxruntime-node/bin/napi-v6/linux/$arch/libonnxruntime.so.1"
for bin in "$cli" "$bench" "$throughput_bin"; do
  [[ -x "$bin" ]] || { echo "run.sh: $bin is missing; build it: cmake --build $build --target semroute_launcher" \
    "semroute_peer_bench semroute_peer_throughput (with -DSEMROUTE_BUILD_BENCHMARKS=ON)" >&2; exit 1; }
done

mkdir -p "$work"
model="$work/model" fp32="$work/model.onnx"
int8="$work/model-int8.onnx" quantize=()
if [[ $per_channel == 1 ]]; then int8="$work/model-int8-per-channel.onnx" quantize=(--per-channel); fi
if [[ ! -f "$model/model.safetensors" ]]; then
  "$cli" make-model "$preset" "$model" --labels math,law,biology,other \
    --tokenizer "$repo/tests/data/tokenizers/modernbert/tokenizer.json"
fi
# Re-exported when the checkpoint or the scripts are newer than the graphs.
if [[ ! -f "$fp32" || "$fp32" -ot "$model/model.safetensors" || "$fp32" -ot "$here/export_onnx.py" ]]; then
  "$python" -W ignore "$here/export_onnx.py" "$model" "$fp32"  # -W: the tracer's warnings are expected
fi
if [[ ! -f "$int8" || "$int8" -ot "$fp32" || "$int8" -ot "$here/quantize_int8.py" ]]; then
  "$python" "$here/quantize_int8.py" "$fp32" "$int8" ${quantize[@]+"${quantize[@]}"}
fi

common=(--semroute "$bench" --model "$model" --ort-fp32 "$fp32" --ort-int8 "$int8" --threads "$threads")
if [[ $avx2 == 1 ]]; then common+=(--avx2); fi
if [[ $throughput == 1 ]]; then
  exec "$python" "$here/bench.py" throughput "${common[@]}" --throughput-bin "$throughput_bin" --ort-lib "$ort_lib" \
    --rounds "$rounds" ${throughput_args[@]+"${throughput_args[@]}"} ${extra[@]+"${extra[@]}"}
fi
"$python" "$here/bench.py" check "${common[@]}" --length "$check_length"
echo
"$python" "$here/bench.py" time "${common[@]}" --lengths "$lengths" --rounds "$rounds" --reps "$reps" \
  ${extra[@]+"${extra[@]}"}
