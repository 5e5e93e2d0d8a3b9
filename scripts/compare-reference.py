#!/usr/bin/env python3
"""Compare `semroute forward --json` output with a fixture's reference.json.

usage: compare-reference.py OURS.json REFERENCE.json [--atol 1e-4] [--require NAME ...]

For every case and every output present in both files it prints the max abs
error and the cosine similarity. Per-token outputs ([batch, seq, ...] with the
case's input shape) are compared only where attention_mask == 1, as the
reference's eager path computes garbage at padded positions. Exits 1 if any
error exceeds the tolerance, if a --require'd output is missing, or if no
output was compared at all.
"""
import argparse
import json
import math
import sys


def masked_pairs(ours, ref, shape, mask):
    batch, seq = len(mask), len(mask[0])
    if len(shape) >= 2 and shape[0] == batch and shape[1] == seq:
        inner = 1
        for d in shape[2:]:
            inner *= d
        for b in range(batch):
            for s in range(seq):
                if mask[b][s]:
                    base = (b * seq + s) * inner
                    for i in range(base, base + inner):
                        yield ours[i], ref[i]
    else:
        yield from zip(ours, ref)


def as_tensor(value):
    """{shape, data} as is; a nested list (e.g. argmax) flattened with its shape."""
    if isinstance(value, dict):
        return value
    shape, level = [], value
    while isinstance(level, list):
        shape.append(len(level))
        level = level[0] if level else None
    flat = value
    while flat and isinstance(flat[0], list):
        flat = [x for row in flat for x in row]
    return {"shape": shape, "data": flat}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ours")
    ap.add_argument("reference")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--require", nargs="*", default=[])
    args = ap.parse_args()
    ours = {c["name"]: c["outputs"] for c in json.load(open(args.ours))["cases"]}
    ref_cases = json.load(open(args.reference))["cases"]
    failed, compared = False, 0
    for case in ref_cases:
        mask = case.get("attention_mask") or [[1] * len(r) for r in case["input_ids"]]
        got = ours.get(case["name"], {})
        for name in args.require:
            if name not in got:
                print(f"{case['name']}: required output '{name}' missing")
                failed = True
        flat = {}
        for name, ref in case["outputs"].items():
            # {"32": {shape, data}, "16": …} -> name32, name16
            if isinstance(ref, dict) and "shape" not in ref:
                flat.update({name + key: value for key, value in ref.items()})
            else:
                flat[name] = ref
        for name, ref in flat.items():
            if name not in got:
                continue
            ref = as_tensor(ref)
            if got[name]["shape"] != ref["shape"]:
                print(f"{case['name']}/{name}: shape {got[name]['shape']} != reference {ref['shape']}")
                failed = True
                continue
            err, dot, na, nb = 0.0, 0.0, 0.0, 0.0
            for a, b in masked_pairs(got[name]["data"], ref["data"], ref["shape"], mask):
                err = max(err, abs(a - b))
                dot, na, nb = dot + a * b, na + a * a, nb + b * b
            cos = dot / math.sqrt(na * nb) if na > 0 and nb > 0 else 1.0
            ok = err <= args.atol
            failed |= not ok
            compared += 1
            print(f"{'ok  ' if ok else 'FAIL'} {case['name']}/{name}: max abs error {err:.3g}, cosine {cos:.9f}")
    if compared == 0:
        print("no output was compared")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
