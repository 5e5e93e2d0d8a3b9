#!/usr/bin/python3
"""Correctness check and interleaved timing of semroute against ONNX Runtime
(run.sh calls it; see README.md).

    bench.py check --semroute BIN --model DIR --ort-fp32 F --ort-int8 F [--length 300]
    bench.py time  --semroute BIN --model DIR --ort-fp32 F --ort-int8 F
                   [--lengths 16,64,256,512] [--rounds 2] [--reps 20] [--threads 2] [--avx2]
    bench.py throughput --throughput-bin BIN --ort-lib LIB --model DIR --ort-fp32 F --ort-int8 F
                   [--callers 1,8,64] [--seconds 30] [--mix mixed] [--dtypes float32,int8]
                   [--rounds 1] [--busy 0]

Throughput runs semroute_peer_throughput once per (precision, callers,
engine) cell, engines alternating, each a fresh process: N callers in closed
loops for --seconds, --busy N processes spinning beside it (a busy
neighbour). A row reports the better round of each engine.

Timing keeps one process per engine and precision alive (the model loads
once) and hands them one (length, engine) cell at a time, round after round,
so that whatever else the machine does hits every engine alike. Each cell is
the median of its repetitions; a row reports the best cell over the rounds.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
AVX2_CAP = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2", "SEMROUTE_MAX_CPU_ISA": "avx2"}
ENGINES = [("ort", "float32"), ("semroute", "float32"), ("ort", "int8"), ("semroute", "int8")]


def bench_ids(length):
    """The ids both bench programs make for a length (same 64-bit LCG)."""
    x, ids = length, []
    for _ in range(length):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        ids.append(1000 + (x >> 33) % 49000)
    return ids


def cpu_line():
    model, flags = "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown CPU":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    isa = [f for f in ("amx_int8", "amx_bf16", "avx512_vnni", "avx512_bf16", "avx_vnni", "avx2") if f in flags]
    return f"{model} ({', '.join(isa) or 'no avx2'}), {os.cpu_count()} CPUs"


def command(args, engine, dtype):
    if engine == "ort":
        model = args.ort_fp32 if dtype == "float32" else args.ort_int8
        return ["node", str(HERE / "ort_bench.mjs"), "--model", model, "--threads", str(args.threads)]
    return [args.semroute, "--model", args.model, "--dtype", dtype, "--threads", str(args.threads)]


def environment(args, engine):
    env = dict(os.environ)
    # ORT has no switch that caps its ISA: only semroute runs capped.
    if engine == "semroute" and args.avx2:
        env.update(AVX2_CAP)
    return env


def logits(args, engine, dtype, ids):
    out = subprocess.run(command(args, engine, dtype) + ["logits", "--ids", ",".join(map(str, ids))],
                         env=environment(args, engine), check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["logits"]


def compare(a, b):
    diff = max(abs(x - y) for x, y in zip(a, b))
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return diff, dot / norm if norm else float("nan")


def check(args):
    ids = bench_ids(args.length)
    got = {(e, d): logits(args, e, d, ids) for e, d in ENGINES}
    failed = False
    print(f"correctness at {args.length} tokens (logits, max abs error / cosine):")
    rows = [("semroute fp32 vs ORT fp32", ("semroute", "float32"), ("ort", "float32"), args.tolerance, None),
            ("semroute int8 vs semroute fp32", ("semroute", "int8"), ("semroute", "float32"), None, args.min_cosine),
            ("ORT int8 vs ORT fp32", ("ort", "int8"), ("ort", "float32"), None, args.min_cosine),
            ("semroute int8 vs ORT int8", ("semroute", "int8"), ("ort", "int8"), None, None)]
    for name, a, b, tolerance, min_cosine in rows:
        if len(got[a]) != len(got[b]):
            sys.exit(f"{name}: {len(got[a])} logits against {len(got[b])}")
        diff, cosine = compare(got[a], got[b])
        bad = (tolerance is not None and not diff <= tolerance) or (min_cosine is not None and not cosine >= min_cosine)
        failed |= bad
        print(f"  {name:32s} {diff:.3e}  {cosine:.6f}" + ("   <-- FAILED" if bad else ""))
    print(f"  semroute fp32 logits: {[round(v, 5) for v in got[('semroute', 'float32')]]}")
    print(f"  ORT fp32 logits:      {[round(v, 5) for v in got[('ort', 'float32')]]}")
    if failed:
        sys.exit(f"FAILED: fp32 must agree within {args.tolerance} (max abs), int8 keep cosine >= {args.min_cosine} "
                 "against its own fp32")


class Server:
    def __init__(self, args, engine, dtype):
        self.name = (engine, dtype)
        self.proc = subprocess.Popen(command(args, engine, dtype) + ["serve"], env=environment(args, engine),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.ready = self.read()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"{self.name[0]} {self.name[1]} exited (code {self.proc.wait()})")
        return json.loads(line)

    def time(self, length, reps, warmup, budget):
        self.proc.stdin.write(f"time {length} {reps} {warmup} {budget}\n")
        return self.read()

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait()


def timing(args):
    lengths = [int(v) for v in args.lengths.split(",")]
    print(f"CPU: {cpu_line()}")
    print(f"threads: {args.threads} per engine (ORT intra-op {args.threads}, inter-op 1), batch 1; "
          f"{args.rounds} rounds x {len(lengths)} lengths x 4 engines, interleaved")
    if args.avx2:
        print("AVX2 cap: semroute runs with " + " ".join(f"{k}={v}" for k, v in AVX2_CAP.items()) +
              "; ORT has no such switch and uses every ISA the CPU has")
    sys.stdout.flush()
    servers = {}
    for engine, dtype in ENGINES:
        servers[(engine, dtype)] = Server(args, engine, dtype)
    sem = servers[("semroute", "float32")].ready
    print(f"semroute sees: {sem.get('cpu')}; int8 activations {sem.get('int8_activation_levels')} levels")
    print(f"ONNX Runtime {servers[('ort', 'float32')].ready.get('version')} (onnxruntime-node, CPU provider)")
    sys.stdout.flush()

    best = {}
    cells = []
    for r in range(args.rounds):
        # Alternate the engine order between rounds so neither always runs first.
        order = ENGINES if r % 2 == 0 else list(reversed(ENGINES))
        for length in lengths:
            for key in order:
                time.sleep(args.pause)  # lets the previous engine's spinning threads park
                result = servers[key].time(length, args.reps, args.warmup, args.budget)
                result.update(round=r, dtype=key[1])
                cells.append(result)
                if args.verbose:
                    print(f"  round {r} {length:5d} {key[0]:8s} {key[1]:7s} median {result['median_ms']:9.3f} ms "
                          f"({result['reps']} reps)", file=sys.stderr)
                prev = best.get((key, length))
                if prev is None or result["median_ms"] < prev["median_ms"]:
                    best[(key, length)] = result
    for server in servers.values():
        server.close()

    print()
    print("| tokens | semroute fp32 ms | ORT fp32 ms | semroute/ORT | semroute int8 ms | ORT int8 ms | semroute/ORT |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for length in lengths:
        row = [str(length)]
        for dtype in ("float32", "int8"):
            s = best[(("semroute", dtype), length)]["median_ms"]
            o = best[(("ort", dtype), length)]["median_ms"]
            row += [f"{s:.2f}", f"{o:.2f}", f"{s / o:.2f}"]
        print("| " + " | ".join(row) + " |")
    print()
    print("ms: median of a cell's repetitions, best cell over the rounds; semroute/ORT < 1: semroute is faster.")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"cpu": cpu_line(), "threads": args.threads, "avx2_cap": args.avx2,
                                                   "cells": cells}, indent=1) + "\n")


def busy_neighbours(count):
    """Processes that keep a core each busy (a router or another service beside the engine)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def throughput_cell(args, engine, dtype, callers):
    cmd = [args.throughput_bin, "--engine", engine, "--callers", str(callers), "--seconds", str(args.seconds),
           "--threads", str(args.threads), "--mix", args.mix, "--dtype", dtype]
    if engine == "ort":
        cmd += ["--onnx", args.ort_fp32 if dtype == "float32" else args.ort_int8, "--ort-lib", args.ort_lib]
    else:
        cmd += ["--model", args.model, "--max-batch", str(args.max_batch), "--max-wait-us", str(args.max_wait_us)]
    out = subprocess.run(cmd, env=environment(args, engine), capture_output=True, text=True)
    if out.returncode != 0:  # e.g. killed by the kernel for memory: the cell failed, the run goes on
        why = f"signal {-out.returncode}" if out.returncode < 0 else f"exit {out.returncode}"
        print(f"  {engine} {dtype} {callers} callers failed ({why}): {out.stderr.strip()[-200:]}", file=sys.stderr)
        return {"engine": engine, "dtype": dtype, "callers": callers, "failed": why, "requests_per_s": 0.0}
    return json.loads(out.stdout.strip().splitlines()[-1])


def cell_text(r):
    """A cell's latencies, memory and CPU time in cores (its own; everything else's), or why it failed."""
    if "failed" in r:
        return [f"failed ({r['failed']})"] * 4
    return [f"{r['p50_ms']:.1f} / {r['p99_ms']:.1f}", f"{r['short_p99_ms']:.1f}", f"{r['peak_rss_mb']:.0f}",
            f"{r['own_cores']:.2f}; {r['others_cores']:.2f}"]


def throughput(args):
    callers = [int(v) for v in args.callers.split(",")]
    dtypes = args.dtypes.split(",")
    print(f"CPU: {cpu_line()}")
    print(f"threads: {args.threads} per engine; mix {args.mix}; {args.seconds:g} s a cell; {args.rounds} round(s); "
          f"semroute batcher max {args.max_batch} texts, {args.max_wait_us} us; busy neighbours: {args.busy}")
    sys.stdout.flush()
    neighbours = busy_neighbours(args.busy)
    best, cells = {}, []
    try:
        for r in range(args.rounds):
            for dtype in dtypes:
                for n in callers:
                    for engine in (("ort", "semroute") if r % 2 == 0 else ("semroute", "ort")):
                        time.sleep(args.pause)
                        result = throughput_cell(args, engine, dtype, n)
                        result["round"] = r
                        cells.append(result)
                        if args.verbose:
                            print(f"  {json.dumps(result)}", file=sys.stderr)
                        prev = best.get((engine, dtype, n))
                        if prev is None or result["requests_per_s"] > prev["requests_per_s"]:
                            best[(engine, dtype, n)] = result
    finally:
        for p in neighbours:
            p.kill()
    print()
    print("| dtype | callers | semroute req/s | ORT req/s | semroute/ORT | semroute p50 / p99 ms | ORT p50 / p99 ms | "
          "short p99 ms (semroute / ORT) | peak RSS MB (semroute / ORT) | CPU cores: own; others' (semroute / ORT) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for dtype in dtypes:
        for n in callers:
            s, o = best[("semroute", dtype, n)], best[("ort", dtype, n)]
            ratio = f"{s['requests_per_s'] / o['requests_per_s']:.2f}" if o["requests_per_s"] > 0 else "-"
            (s_lat, s_short, s_rss, s_cpu), (o_lat, o_short, o_rss, o_cpu) = cell_text(s), cell_text(o)
            print(f"| {dtype} | {n} | {s['requests_per_s']:.2f} | {o['requests_per_s']:.2f} | {ratio} | {s_lat} | "
                  f"{o_lat} | {s_short} / {o_short} | {s_rss} / {o_rss} | {s_cpu} / {o_cpu} |")
    print()
    print("semroute/ORT > 1: semroute answers more requests per second. CPU cores: the engine's CPU time over the "
          "cell, and every other process's (a busy neighbour's share), per second.")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"cpu": cpu_line(), "threads": args.threads, "mix": args.mix,
                                                   "busy": args.busy, "cells": cells}, indent=1) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["check", "time", "throughput"])
    ap.add_argument("--semroute", help="semroute_peer_bench executable")
    ap.add_argument("--throughput-bin", help="throughput: semroute_peer_throughput executable")
    ap.add_argument("--ort-lib", help="throughput: libonnxruntime.so of onnxruntime-node")
    ap.add_argument("--callers", default="1,8,64", help="throughput: caller counts")
    ap.add_argument("--seconds", type=float, default=30, help="throughput: seconds a cell")
    ap.add_argument("--mix", default="mixed", help="throughput: 'mixed' or one length in tokens")
    ap.add_argument("--dtypes", default="float32,int8", help="throughput: precisions")
    ap.add_argument("--max-batch", type=int, default=16, help="throughput: semroute's batcher")
    ap.add_argument("--max-wait-us", type=int, default=1000, help="throughput: semroute's batcher")
    ap.add_argument("--busy", type=int, default=0, help="throughput: processes keeping a core busy each")
    ap.add_argument("--model", required=True, help="model directory (semroute make-model)")
    ap.add_argument("--ort-fp32", required=True)
    ap.add_argument("--ort-int8", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--avx2", action="store_true", help="cap semroute to AVX2")
    ap.add_argument("--length", type=int, default=300, help="check: tokens (past the local window)")
    ap.add_argument("--tolerance", type=float, default=1e-3, help="check: fp32 max abs error")
    ap.add_argument("--min-cosine", type=float, default=0.95, help="check: int8 against its own fp32")
    ap.add_argument("--lengths", default="16,64,256,512")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--budget", type=float, default=10.0,
                    help="seconds per cell after which repetitions stop (at least 5 run)")
    ap.add_argument("--pause", type=float, default=0.3, help="seconds between cells")
    ap.add_argument("--json-out", help="every cell as JSON")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    {"check": check, "time": timing, "throughput": throughput}[args.mode](args)


if __name__ == "__main__":
    main()
