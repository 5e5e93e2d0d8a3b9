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


def reference(cli, package, twin, cases, scan=None):
    """cases: [(parts, questions)], parts [(role, text)] in user, context, answer order, questions {id: {type,
    instructions, criteria|levels, over?, overflow?, require_full_input?}} of types choice, noul, score, set.
    Every case's answers and the tokens it read, from one tokenize and one forward of the twin over every
    case's sequences (a case is fitted to max_length, a cut part that every question reads is read in
    windows). `scan`: the scan budget (default four inputs)."""
    with open(os.path.join(package, "config.json")) as f:
        config = json.load(f)
    with open(os.path.join(package, "calibration.json")) as f:
        calibration = json.load(f)
    texts = [t for parts, questions in cases for t in [text for _, text in parts] +
             [q["instructions"] for q in questions.values()] +
             [option_text(*o) for q in questions.values() for o in options_of(q)]]
    tokens = tokenize_all(cli, twin, texts)
    plans = [plan(config, tokens, parts, questions, scan or 4 * config["max_length"]) for parts, questions in cases]
    sequences = [sequence for p in plans for sequence in p["sequences"]]
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "cases.json")
        with open(path, "w") as f:
            json.dump({"cases": [{"name": str(i), "input_ids": [ids], "attention_mask": [[1] * len(ids)]}
                                 for i, (ids, _) in enumerate(sequences)]}, f)
        got = subprocess.run([cli, "forward", twin, path, "--json"], check=True, capture_output=True, text=True)
    hidden_states = []
    for case in json.loads(got.stdout)["cases"]:
        out = case["outputs"]["last_hidden_state"]
        hidden_states.append(np.asarray(out["data"], np.float64).reshape(out["shape"])[0])
    head = {name: np.frombuffer(raw, np.float32).reshape(entry["shape"]).astype(np.float64)
            for name, (entry, raw) in runtime_packages.read_safetensors(os.path.join(package, "model.safetensors")).items()
            if not name.startswith("encoder.")}
    answers, used = [], 0
    for p, (_, questions) in zip(plans, cases):
        windows = [read_logits(config, head, hidden_states[used + k], placed)
                   for k, (_, placed) in enumerate(p["sequences"])]
        used += len(p["sequences"])
        out = {}
        for qid, q in questions.items():
            if qid in p["errors"]:
                out[qid] = {"error": p["errors"][qid]}
                continue
            reads = windows if p["windowed"] and q.get("overflow") != "truncate" else windows[:1]
            stacked = np.stack([w[qid] for w in reads])
            out[qid] = answer(q, stacked.max(0) if q["type"] == "set" else stacked.mean(0), calibration)
            if q.get("require_full_input"):
                out[qid]["input_coverage"] = "complete"
        answers.append((out, sum(len(ids) for ids, _ in p["sequences"])))
    return answers


def fit(schema, lengths, read, max_length):
    """Kept tokens per part: the part no question reads shrinks first (to 64, then 1), then the read parts in
    order; (kept, unread cut, read cut), or None when the questions alone do not fit."""
    kept = list(lengths)
    cuts = [0, 0]

    def over():
        return 3 + len(kept) + schema + sum(kept) - max_length

    def cut(i, floor, which):
        keep = max(min(kept[i], floor), kept[i] - over())
        cuts[which] += kept[i] - keep
        kept[i] = keep

    unread = [i for i, r in enumerate(read) if not r]
    if unread:
        for floor in (64, 1):
            if over() > 0:
                cut(unread[0], floor, 0)
    for i, r in enumerate(read):
        if r and over() > 0:
            cut(i, 1, 1)
    return None if over() > 0 else (kept, cuts[0], cuts[1])


def plan(config, tokens, parts, questions, scan):
    """A case's sequences ([(ids, placed)]), whether its cut part is read in windows, and per-question errors."""
    roles = [role for role, _ in parts]
    part_ids = [tokens(text) for _, text in parts]
    reads = {}
    for qid, q in questions.items():
        over = q.get("over", roles)
        reads[qid] = [over] if isinstance(over, str) else [r for r in roles if r in over]
    read = [any(role in r for r in reads.values()) for role in roles]
    schema = sum(1 + len(tokens(q["instructions"])) + sum(1 + len(tokens(option_text(*o))) for o in options_of(q)) +
                 (q["type"] in ("choice", "noul")) for q in questions.values())
    first = fit(schema, [len(ids) for ids in part_ids], read, config["max_length"])
    if first is None:
        return {"sequences": [], "windowed": False, "errors": {qid: "max_length_exceeded" for qid in questions}}
    kept, _, read_cut = first
    single = {tuple(r) for r in reads.values()}
    role = next(iter(single))[0] if read_cut and len(single) == 1 and len(next(iter(single))) == 1 else None
    errors = {}
    windows = [None]
    if role is not None:
        w = roles.index(role)
        total, length = len(part_ids[w]), kept[w]
        if total > scan:
            errors = {qid: "scan_budget_exceeded" for qid, q in questions.items() if q.get("overflow") != "truncate"}
        if len(errors) < len(questions) and any(q.get("overflow") != "truncate" for q in questions.values()) \
                and total <= scan:
            overlap = min(config["window_overlap"], length // 4)
            stride = max(1, length - overlap)
            windows = []
            for start in range(0, max(1, total - overlap), stride):
                windows.append((start, min(total, start + length)))
                if windows[-1][1] >= total:
                    break
        else:
            windows = [(0, length)]
    sequences, others_whole = [], True
    for window in windows:
        ids_of = list(part_ids)
        if window is not None:
            ids_of[roles.index(role)] = part_ids[roles.index(role)][window[0]:window[1]]
        kept_w, unread_cut, read_cut_w = fit(schema, [len(ids) for ids in ids_of], read, config["max_length"])
        others_whole = others_whole and unread_cut == 0 and read_cut_w == 0
        sequences.append(layout(config, tokens, roles, [ids[:k] for ids, k in zip(ids_of, kept_w)], questions, reads))
    whole = (first[1] == 0 and read_cut == 0) or (len(windows) > 1 and others_whole)  # every part read whole
    for qid, q in questions.items():
        if q.get("require_full_input") and not whole and qid not in errors:
            errors[qid] = "max_length_exceeded"
    return {"sequences": sequences, "windowed": len(windows) > 1, "errors": errors}


def layout(config, tokens, roles, part_ids, questions, reads):
    """One sequence (markers inserted by ID) and each question's (id, query, option positions, pool)."""
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
        placed.append([qid, query, positions])
    ids.append(markers["[SEP_SCHEMA]"])
    ranges = {}
    for role, part in zip(roles, part_ids):
        start = len(ids)
        ids += [markers[f"[SEG_{role}]"]] + part
        ranges[role] = (start, len(ids))
    ids.append(config["eos_token_id"])
    for entry in placed:
        over = reads[entry[0]]
        entry.append((ranges[over[0]][0], ranges[over[-1]][1]))
    return ids, placed


def read_logits(config, head, hidden, placed):
    """Each question's option logits in one sequence (float64)."""
    def linear(name, x):
        return head[f"{name}.weight"] @ x + head[f"{name}.bias"]

    def norm(x):
        return layer_norm(x, head["norm.weight"], head["norm.bias"])

    out = {}
    for qid, query, positions, (start, end) in placed:
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
        out[qid] = np.asarray(logits)
    return out


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
