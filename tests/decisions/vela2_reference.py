"""Vela 2.0 0.3B packages with random weights, and the answers their layout
and readout give, computed here independently of the library (numpy, from
the documented behaviour: docs/decisions.md).

A package is made by `semroute make-model tiny --vela2` (a tiny ModernBERT
under `encoder.`, a random marker head, a calibration); its "twin" is that
encoder as a checkpoint of its own. The reference assembles the marker sequence itself
(tokens of each text piece from `semroute tokenize --no-special` on the twin,
markers inserted by ID), takes the twin's last hidden states from
`semroute forward`, and reads the options out in float64.

    make_package(cli, repo, out, readout, seed) -> (package_dir, twin_dir)
    reference(cli, package_dir, twin_dir, [(parts, questions)]) -> [({id: answer}, input_tokens)]"""
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../server"))
import runtime_packages  # noqa: E402

NOUL_OPTIONS = [("no", "No. The statement or question is not satisfied."),
                ("yes", "Yes. The statement or question is satisfied.")]

def make_package(cli, repo, out, readout="cosine", seed=31):
    """A tiny package (`semroute make-model tiny --vela2`) and its twin: the package's encoder as a plain
    ModernBERT checkpoint beside the tokenizer without markers, for `semroute forward` and `tokenize`."""
    tokenizer = os.path.join(repo, "tests/data/tokenizers/modernbert/tokenizer.json")
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([cli, "make-model", "tiny", out, "--vela2", readout, "--max-length", "512", "--tokenizer",
                    tokenizer, "--seed", str(seed)], check=True, capture_output=True)
    twin = out + "_twin"
    shutil.rmtree(twin, ignore_errors=True)
    os.makedirs(twin)
    with open(os.path.join(out, "config.json")) as f:
        runtime_packages.write_json(os.path.join(twin, "config.json"), json.load(f)["encoder_config"])
    tensors = runtime_packages.read_safetensors(os.path.join(out, "model.safetensors"))
    runtime_packages.write_safetensors(os.path.join(twin, "model.safetensors"), {
        "model." + name[len("encoder."):]: value for name, value in tensors.items() if name.startswith("encoder.")})
    shutil.copy(tokenizer, os.path.join(twin, "tokenizer.json"))
    return out, twin


_TOKENS = {}  # (tokenizer.json digest, text) -> ids: the twins share one tokenizer


def tokenize_all(cli, twin, texts):
    """Token IDs of every text, by one `semroute tokenize --input` (JSONL in and out)."""
    with open(os.path.join(twin, "tokenizer.json"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    missing = sorted({t for t in texts if (digest, t) not in _TOKENS})
    if missing:
        lines = "".join(json.dumps({"text": t}) + "\n" for t in missing)
        got = subprocess.run([cli, "tokenize", twin, "-", "--no-special"], input=lines, check=True,
                             capture_output=True, text=True)
        for text, line in zip(missing, got.stdout.splitlines()):
            _TOKENS[(digest, text)] = json.loads(line)["ids"]
    return lambda text: _TOKENS[(digest, text)]


def options_of(question):
    kind = question["type"]
    if kind == "noul":
        given = question.get("criteria") or {}
        return [(name, given.get(key) or default) for (name, default), key in zip(NOUL_OPTIONS, ("false", "true"))]
    if kind == "score":
        return [(str(level), "") for level in question["levels"]]
    return [(name, description or "") for name, description in question["criteria"].items()]


def option_text(name, description):
    return name if not description else f"{name}: {description}"


def layer_norm(x, weight, bias):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + 1e-5) * weight + bias


def normalize(x):
    return x / max(np.linalg.norm(x), 1e-12)


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def reference(cli, package, twin, cases):
    """cases: [(parts, questions)], parts [(role, text)] in user, context, answer order, questions {id: {type,
    instructions, criteria|levels, over?}} of types choice, noul, score, set; each case one sequence (the parts
    fit). Every case's answers and its sequence's length, from one tokenize and one forward of the twin."""
    with open(os.path.join(package, "config.json")) as f:
        config = json.load(f)
    with open(os.path.join(package, "calibration.json")) as f:
        calibration = json.load(f)
    texts = [t for parts, questions in cases for t in [text for _, text in parts] +
             [q["instructions"] for q in questions.values()] +
             [option_text(*o) for q in questions.values() for o in options_of(q)]]
    tokens = tokenize_all(cli, twin, texts)
    laid_out = [layout(config, tokens, parts, questions) for parts, questions in cases]
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "cases.json")
        with open(path, "w") as f:
            json.dump({"cases": [{"name": str(i), "input_ids": [ids], "attention_mask": [[1] * len(ids)]}
                                 for i, (ids, _, _) in enumerate(laid_out)]}, f)
        got = subprocess.run([cli, "forward", twin, path, "--json"], check=True, capture_output=True, text=True)
    head = {name: np.frombuffer(raw, np.float32).reshape(entry["shape"]).astype(np.float64)
            for name, (entry, raw) in runtime_packages.read_safetensors(os.path.join(package, "model.safetensors")).items()
            if not name.startswith("encoder.")}
    answers = []
    for case, (parts, _), (ids, placed, ranges) in zip(json.loads(got.stdout)["cases"], cases, laid_out):
        out = case["outputs"]["last_hidden_state"]
        hidden = np.asarray(out["data"], np.float64).reshape(out["shape"])[0]
        answers.append((read_answers(config, calibration, head, hidden, [role for role, _ in parts], placed,
                                    ranges), len(ids)))
    return answers


def layout(config, tokens, parts, questions):
    """The sequence (markers inserted by ID), each question's query and option positions, each part's range."""
    markers = config["marker_ids"]
    ids, placed = [config["bos_token_id"]], []
    for qid, q in questions.items():
        query = len(ids)
        ids += [markers["[Q]"]] + tokens(q["instructions"])
        positions = []
        for name, description in options_of(q):
            positions.append(len(ids))
            ids += [markers["[O]"]] + tokens(option_text(name, description))
        if q["type"] in ("choice", "noul"):
            positions.append(len(ids))
            ids.append(markers["[ABS]"])
        placed.append((qid, q, query, positions))
    ids.append(markers["[SEP_SCHEMA]"])
    ranges = {}
    for role, text in parts:
        start = len(ids)
        ids += [markers[f"[SEG_{role}]"]] + tokens(text)
        ranges[role] = (start, len(ids))
    ids.append(config["eos_token_id"])
    return ids, placed, ranges


def read_answers(config, calibration, head, hidden, roles, placed, ranges):
    def linear(name, x):
        return head[f"{name}.weight"] @ x + head[f"{name}.bias"]

    def norm(x):
        return layer_norm(x, head["norm.weight"], head["norm.bias"])

    answers = {}
    for qid, q, query, positions in placed:
        over = q.get("over", roles)
        over = [over] if isinstance(over, str) else [r for r in roles if r in over]
        start, end = ranges[over[0]][0], ranges[over[-1]][1]
        pooled = hidden[start:end].mean(0)
        part = normalize(linear("w_p", norm(pooled)))
        question = linear("w_q", norm(hidden[query]))
        logits = []
        for position in positions:
            logit = 0.0
            if config["readout"] in ("cosine", "both"):
                logit += normalize(linear("w_o", norm(hidden[position])) + question) @ part / math.exp(head["log_tau"])
            if config["readout"] in ("mlp", "both"):
                inner = np.maximum(head["cls_mlp.0.weight"] @ hidden[position] + head["cls_mlp.0.bias"], 0)
                logit += float(head["cls_mlp.3.weight"] @ inner + head["cls_mlp.3.bias"])
            logits.append(logit)
        answers[qid] = answer(q, np.asarray(logits), calibration)
    return answers


def answer(q, logits, calibration):
    temperature = calibration["temperature"]
    names = [name for name, _ in options_of(q)]
    n = len(names)
    if q["type"] == "set":
        p = 1 / (1 + np.exp(-logits[:n] / temperature["set"]))
        return {"probabilities": dict(zip(names, p.tolist())), "threshold": calibration["thresholds"]["set:*"]}
    t = temperature["score" if q["type"] == "score" else "choice"]
    p = softmax(logits[:n] / t)
    if q["type"] == "noul":
        return {"noul": float(p[1])}
    if q["type"] == "choice":
        ordered = sorted(p, reverse=True)
        return {"choice": names[int(np.argmax(logits[:n]))], "confidence": float(min(1, max(0, ordered[0] - ordered[1]))),
                "probabilities": dict(zip(names, p.tolist())),
                "abstain_probability": float(softmax(logits / t)[-1])}
    mean = float(sum(i * v for i, v in enumerate(p)))
    variance = float(sum(v * (i - mean) ** 2 for i, v in enumerate(p)))
    return {"score": mean, "confidence": min(1.0, max(0.0, 1 - variance / ((n * n - 1) / 12))),
            "probabilities": {str(i): float(v) for i, v in enumerate(p)}, "legend": {str(i): name for i, name in enumerate(names)}}
