#!/usr/bin/env python3
"""What a bundle of three heads costs `semroute serve` under the runtime
contract, against one head (docs/serve.md "Bundles"): one caller over the
Unix socket, each call on a text never asked before (the result cache misses),
p50 of N calls per cell, all cells interleaved in one run:

  one head        /v1/classify, one head of the bound model
  3 bound heads   /v1/bundle, the three heads of one model on one backbone
                  (one packed forward)
  3 models        /v1/bundle, three models of their own (three forwards)
  3 bound, again  the 3-head bundle on a text already answered (result cache)

Shapes: the default models' (models/multitask/base with the heads of
models/domain, jailbreak and pii), or with --base a ModernBERT-base shape
with random weights (three checkpoints; the first is also the backbone). A
benchmark, not a test.

    bundle_heads.py SEMROUTE_CLI REPO_DIR [--base] [CALLS per cell]"""
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import cpu_name, post  # noqa: E402

CLI, REPO = sys.argv[1], os.path.abspath(sys.argv[2])
BASE = "--base" in sys.argv
CALLS = int(next((a for a in sys.argv[3:] if a.isdigit()), "200"))
HEADS = ["domain", "jailbreak", "pii"]


def config_text(work):
    models = os.path.join(REPO, "models")
    backbone, heads = f"{models}/multitask/base", {h: f"{models}/{h}" for h in HEADS}
    if BASE:  # three checkpoints of their own (the result cache would answer one model's copy for another)
        heads = {h: os.path.join(work, h) for h in HEADS}
        for seed, directory in enumerate(heads.values()):
            subprocess.run([CLI, "make-model", "modernbert-base", directory, "--labels", "a,b,c,d", "--seed",
                            str(seed + 1), "--tokenizer",
                            os.path.join(REPO, "tests/data/tokenizers/modernbert/tokenizer.json")],
                           check=True, capture_output=True)
        backbone = heads["domain"]
    text = f"unix_socket: {work}/s.sock\nmodels:\n  guard:\n    path: {backbone}\n    heads:\n"
    text += "".join(f"      {h}: {d}\n" for h, d in heads.items())
    text += "".join(f"  {h}: {d}\n" for h, d in heads.items())
    return text


def prompt(i):
    return (f"Request {i}: explain how compound interest at {i % 17 + 1} percent grows a deposit of {i * 37} "
            f"dollars over {i % 29 + 2} years, and whether my colleague John Smith in Boston should invest.")


def main():
    work = tempfile.mkdtemp(prefix="semroute-bundle-")
    config = os.path.join(work, "serve.yaml")
    with open(config, "w") as f:
        f.write(config_text(work))
    proc = subprocess.Popen([CLI, "serve", config], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening"):
        sys.exit(f"serve did not start: {line} {proc.stderr.read()}")
    sock = os.path.join(work, "s.sock")
    cells = {
        "one head": lambda t: ("/v1/classify", {"model": "guard", "head": "domain", "input": t}),
        "3 bound heads": lambda t: ("/v1/bundle", {"tasks": [
            {"id": h, "classify": {"model": "guard", "head": h, "input": t}} for h in HEADS]}),
        "3 models": lambda t: ("/v1/bundle", {"tasks": [
            {"id": h, "classify": {"model": h, "input": t}} for h in HEADS]}),
        "3 bound, again": lambda t: ("/v1/bundle", {"tasks": [
            {"id": h, "classify": {"model": "guard", "head": h, "input": prompt(0)}} for h in HEADS]}),
    }
    times = {name: [] for name in cells}
    try:
        for i in range(-5, CALLS):  # interleaved, so that drift hits every cell alike; 5 warm-up rounds
            for k, (name, request) in enumerate(cells.items()):
                path, body = request(prompt(4 * abs(i) + k + 1 if i >= 0 else 100000 + 4 * abs(i) + k))
                status, answer, seconds = post(sock, path, body)
                if status != 200 or any(r.get("status", 200) != 200 for r in answer.get("results", [])):
                    sys.exit(f"{name}: {status} {answer}")
                if i >= 0:
                    times[name].append(seconds * 1000)
    finally:
        proc.terminate()
        proc.wait()
    shape = "ModernBERT-base shape (random weights)" if BASE else "default models (ModernBERT small, 4 layers)"
    print(f"CPU: {cpu_name()}, {os.cpu_count()} vCPU; AVX-512: "
          f"{'yes' if 'avx512f' in open('/proc/cpuinfo').read() else 'no'}; {shape}; {CALLS} calls per cell, p50")
    one = statistics.median(times["one head"])
    print("| call | p50 ms | × one head |\n|---|---|---|")
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"| {name} | {p50:.2f} | {p50 / one:.2f} |")


if __name__ == "__main__":
    main()
