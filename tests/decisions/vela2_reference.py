"""Vela 2.0 0.3B packages with random weights, and the answers their layout
and readout give, computed here independently of the library (numpy, from
the documented behaviour: docs/decisions.md).

A package is a tiny ModernBERT checkpoint made by `semroute make-model` (its
"twin", whose tensors the package holds under `encoder.`), a random marker
head and a calibration. The reference assembles the marker sequence itself
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

MARKERS = ["[Q]", "[O]", "[ABS]", "[SEP_SCHEMA]", "[SEG_user]", "[SEG_answer]", "[E]", "[SEG_context]"]
FIRST_MARKER_ID = 50300  # added-token slots of ModernBERT's vocabulary
NOUL_OPTIONS = [("no", "No. The statement or question is not satisfied."),
                ("yes", "Yes. The statement or question is satisfied.")]
CALIBRATION = {"temperature": {"choice": 1.3, "score": 0.8, "set": 1.1, "span": 1.0},
               "thresholds": {"set:*": 0.5, "span:*": 0.5}}


def make_package(cli, repo, out, readout="cosine", seed=31):
    twin = runtime_packages.make_model(cli, repo, out + "_twin", "--seed", str(seed))
    with open(os.path.join(twin, "config.json")) as f:
        encoder = json.load(f)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    hidden, projection = encoder["hidden_size"], 16
    rng = np.random.default_rng(seed)

    def tensor(*shape, scale=0.3):
        return rng.normal(0.0, scale, shape).astype(np.float32)

    head = {"norm.weight": 1 + tensor(hidden, scale=0.1), "norm.bias": tensor(hidden, scale=0.1),
            "log_tau": np.array(math.log(0.07), np.float32), "log_tau_span": np.array(math.log(0.1), np.float32)}
    for name in ("w_o", "w_q", "w_p", "w_t", "w_e"):
        head[f"{name}.weight"], head[f"{name}.bias"] = tensor(projection, hidden), tensor(projection)
    if readout in ("mlp", "both"):
        head.update({"cls_mlp.0.weight": tensor(2 * hidden, hidden), "cls_mlp.0.bias": tensor(2 * hidden),
                     "cls_mlp.3.weight": tensor(1, 2 * hidden), "cls_mlp.3.bias": tensor(1)})
    tensors = {"encoder." + name[len("model."):]: value
               for name, value in runtime_packages.read_safetensors(os.path.join(twin, "model.safetensors")).items()
               if name.startswith("model.")}
    for name, value in head.items():
        tensors[name] = ({"dtype": "F32", "shape": list(value.shape)}, value.tobytes())
    runtime_packages.write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    encoder["architectures"] = ["ModernBertModel"]
    runtime_packages.write_json(os.path.join(out, "config.json"), {
        "format_version": 1, "model_type": "vela2-unified",
        "marker_ids": {m: FIRST_MARKER_ID + i for i, m in enumerate(MARKERS)},
        "bos_token_id": encoder["bos_token_id"], "eos_token_id": encoder["eos_token_id"],
        "pad_token_id": encoder["pad_token_id"], "max_length": 512, "window_overlap": 64,
        "encoder_config": encoder, "proj_dim": projection, "readout": readout})
    runtime_packages.write_json(os.path.join(out, "calibration.json"), CALIBRATION)
    with open(os.path.join(twin, "tokenizer.json")) as f:
        tokenizer = json.load(f)
    for token in tokenizer["added_tokens"]:  # the markers as the published tokenizer lists them
        if FIRST_MARKER_ID <= token["id"] < FIRST_MARKER_ID + len(MARKERS):
            token["content"] = MARKERS[token["id"] - FIRST_MARKER_ID]
    runtime_packages.write_json(os.path.join(out, "tokenizer.json"), tokenizer)
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
        answers.append((read_answers(config, head, hidden, [role for role, _ in parts], placed, ranges), len(ids)))
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


def read_answers(config, head, hidden, roles, placed, ranges):
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
        answers[qid] = answer(q, np.asarray(logits))
    return answers


def answer(q, logits):
    temperature = CALIBRATION["temperature"]
    names = [name for name, _ in options_of(q)]
    n = len(names)
    if q["type"] == "set":
        p = 1 / (1 + np.exp(-logits[:n] / temperature["set"]))
        return {"probabilities": dict(zip(names, p.tolist())), "threshold": CALIBRATION["thresholds"]["set:*"]}
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
