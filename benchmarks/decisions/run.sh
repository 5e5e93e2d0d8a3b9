#!/usr/bin/env bash
# Vela 2.0 decisions at the 0.3B member's shape (mmBERT-base, random
# weights): the router's built-in signals (domain, prompt guard, safety, fact
# check, feedback, modality) as one /v1/decisions request, as one request
# each, and one question alone, in process (semroute_decision_bench), beside
# ONNX Runtime's forward of the same encoder at the same lengths
# (onnxruntime-node, CPU provider), rounds interleaved. On demand, never in
# CI. See docs/speed.md.
#
#   benchmarks/decisions/run.sh [--rounds 2] [--reps 10] [--threads 2]
#
# BUILD_DIR (default build) must hold the CLI and semroute_decision_bench;
# WORK_DIR (default /tmp/semroute-decisions) keeps the package and the ONNX
# export between runs. Needs what benchmarks/peers/run.sh installs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$(cd "$repo" && realpath -m "${BUILD_DIR:-build}")"
peers="$repo/benchmarks/peers"
rounds=2 reps=10 threads=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
work="${WORK_DIR:-/tmp/semroute-decisions}"
python=/usr/bin/python3
cli="$build/cli/semroute" bench="$build/benchmarks/semroute_decision_bench"
tokenizer="$repo/tests/data/tokenizers/modernbert/tokenizer.json"
[[ -x "$bench" ]] || { echo "run.sh: build $bench first (cmake --build $build --target semroute_decision_bench)" >&2; exit 1; }
[[ -d "$peers/node_modules/onnxruntime-node" ]] || { echo "run.sh: run benchmarks/peers/run.sh once (it installs onnxruntime-node)" >&2; exit 1; }

mkdir -p "$work"
# The package and a classifier of the same seed: its encoder is the package's, tensor for tensor.
[[ -f "$work/vela2/model.safetensors" ]] || "$cli" make-model mmbert-base "$work/vela2" --vela2 both --tokenizer "$tokenizer"
[[ -f "$work/encoder/model.safetensors" ]] || "$cli" make-model mmbert-base "$work/encoder" --tokenizer "$tokenizer"
[[ -f "$work/encoder.onnx" ]] || "$python" -W ignore "$peers/export_onnx.py" "$work/encoder" "$work/encoder.onnx"

"$python" - "$bench" "$work" "$peers/ort_bench.mjs" "$rounds" "$reps" "$threads" <<'PY'
import json, statistics, subprocess, sys
bench, work, ort, rounds, reps, threads = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:])
semroute, onnx, cpu = {}, {}, None
for _ in range(rounds):
    lines = [json.loads(l) for l in subprocess.run([bench, "--package", f"{work}/vela2", "--reps", str(reps), "--threads",
             str(threads)], check=True, capture_output=True, text=True).stdout.splitlines()]
    cpu = lines[0]
    for row in lines[1:]:
        semroute.setdefault(row["scenario"], []).append(row)
    lengths = sorted({n for row in lines[1:] for n in row["lengths"]})
    out = subprocess.run(["node", ort, "--model", f"{work}/encoder.onnx", "--threads", str(threads), "time", "--lengths",
                          ",".join(map(str, lengths)), "--reps", str(reps), "--warmup", "1"],
                         check=True, capture_output=True, text=True).stdout
    for row in map(json.loads, out.splitlines()):
        onnx.setdefault(row["length"], []).append(row["median_ms"])
print(f"CPU: {cpu['cpu']}, {cpu['threads']} threads, fp32 GEMM {cpu['fp32_gemm_gflops']} GFLOP/s; {rounds} rounds, "
      f"medians of {reps} runs each, the median over rounds")
print("| scenario | questions | forwards | tokens | semroute ms | ONNX Runtime forward ms | ratio | linear layers of GEMM peak |")
print("|---|---|---|---|---|---|---|---|")
for scenario, rows in semroute.items():
    ms = statistics.median(r["median_ms"] for r in rows)
    r = rows[0]
    ort_ms = sum(statistics.median(onnx[n]) for n in r["lengths"])  # ONNX Runtime's forward of each request
    print(f"| {scenario} | {r['questions']} | {len(r['lengths'])} | {'+'.join(map(str, r['lengths']))} | {ms:.1f} | "
          f"{ort_ms:.1f} | {ms / ort_ms:.2f} | {statistics.median(x['of_gemm_peak'] for x in rows):.2f} |")
PY
