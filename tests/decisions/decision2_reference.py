"""Decision 2.0 answers computed here from the documented behaviour
(docs/decisions.md), independently of the library: each question's prompt
rendered with Python's own canonical JSON (json.dumps, keys sorted, no
spaces, UTF-8 as it is, floats as Python writes them), tokenized segment by
segment (`semroute tokenize` on the package's tokenizer), the backbone's
last hidden states from `semroute forward` on the package's backbone/
(a plain Qwen3 checkpoint, checked against Hugging Face elsewhere), and the
candidate head, calibration and score bias in float64 numpy.

    reference(cli, package, [(state, questions)]) -> [({id: answer}, input_tokens)]
    identity(package) -> the checkpoint identity, computed from the files"""
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../server"))
import runtime_packages  # noqa: E402

SUFFIX = "\n\nSelect the single option best supported by the context and instructions.\nDecision:"
ROOT_FILES = {"decision_config.json", "decision_head.safetensors", "tokenizer.json", "tokenizer_config.json",
              "special_tokens_map.json", "added_tokens.json", "vocab.json", "merges.txt", "tokenizer.model",
              "chat_template.jinja"}


def canonical(value):
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def payload(value):
    return value if isinstance(value, str) else canonical(value)


def options_of(q):
    """[(key, description)] as the prompt lists them."""
    if q["type"] == "noul":
        given = q.get("criteria") or {c["key"]: c.get("description") for c in q.get("choices", [])}
        return [("false", given.get("false") if given.get("false") is not None else "No"),
                ("true", given.get("true") if given.get("true") is not None else "Yes")]
    if q["type"] == "score":
        return [(str(i), level) for i, level in enumerate(q.get("levels") or q.get("criteria"))]
    if "choices" in q:
        return [(c["key"], c.get("description")) for c in q["choices"]]
    return list(q["criteria"].items())


def segments(state, q):
    prefix = ("Context:\n" + payload(state) + "\n\nTask type: " + q["type"] + "\nQuestion:\n" +
              payload(q["instructions"]) + "\nOptions:")
    return [prefix] + ["\n<option>\n" + canonical({"key": k, "description": d}) + "\n</option>"
                       for k, d in options_of(q)] + [SUFFIX]


def identity(package):
    files = {}
    for root, _, names in os.walk(package):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, package).replace(os.sep, "/")
            nested = rel.startswith("backbone/") or rel.startswith("adapter/")
            if (nested and os.path.splitext(rel)[1] in (".json", ".safetensors", ".bin", ".model", ".txt")) or \
                    (not nested and rel in ROOT_FILES):
                with open(path, "rb") as f:
                    files[rel] = hashlib.sha256(f.read()).hexdigest()
    return hashlib.sha256(canonical(files).encode()).hexdigest()


def tokenize(cli, package, texts):
    lines = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    got = subprocess.run([cli, "tokenize", package, "-", "--no-special"], input=lines, check=True,
                         capture_output=True, text=True)
    return {t: json.loads(line)["ids"] for t, line in zip(texts, got.stdout.splitlines())}


def layer_norm(x, weight, bias):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * weight + bias


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def reference(cli, package, cases):
    """cases: [(state, questions)] with valid choice, noul and score questions (as the request gives them)."""
    with open(os.path.join(package, "MODEL_MANIFEST.json")) as f:
        manifest = json.load(f)
    with open(os.path.join(package, "decision_config.json")) as f:
        head_dim = json.load(f)["head_dim"]
    with open(os.path.join(package, manifest["calibration"]["file"])) as f:
        temperature = json.load(f)["temperature_by_type"]
    with open(os.path.join(package, manifest["score_bias"]["file"])) as f:
        bias = {int(k): v for k, v in json.load(f)["offsets"].items()}
    limit = manifest["max_input_tokens"]
    rendered = [[segments(state, q) for q in questions.values()] for state, questions in cases]
    tokens = tokenize(cli, package, sorted({s for case in rendered for question in case for s in question}))
    rows = []  # (case, id, ids, endpoints)
    errors = {}
    for k, ((_, questions), case) in enumerate(zip(cases, rendered)):
        for qid, parts in zip(questions, case):
            ids, endpoints = [], []
            for i, part in enumerate(parts):
                ids += tokens[part]
                if 0 < i < len(parts) - 1:
                    endpoints.append(len(ids) - 1)
            if len(ids) > limit:
                errors[(k, qid)] = "max_length_exceeded"
            else:
                rows.append((k, qid, ids, endpoints))
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "cases.json")
        with open(path, "w") as f:
            json.dump({"cases": [{"name": str(i), "input_ids": [ids], "attention_mask": [[1] * len(ids)]}
                                 for i, (_, _, ids, _) in enumerate(rows)]}, f)
        got = subprocess.run([cli, "forward", os.path.join(package, "backbone"), path, "--json"], check=True,
                             capture_output=True, text=True)
    hidden = []
    for case in json.loads(got.stdout)["cases"]:
        out = case["outputs"]["last_hidden_state"]
        hidden.append(np.asarray(out["data"], np.float64).reshape(out["shape"])[0])
    head = {name: np.frombuffer(raw, np.float32).reshape(entry["shape"]).astype(np.float64)
            for name, (entry, raw) in runtime_packages.read_safetensors(
                os.path.join(package, "decision_head.safetensors")).items()}
    logits = {}
    for (k, qid, ids, endpoints), h in zip(rows, hidden):
        c = layer_norm(h[endpoints], head["candidate_norm.weight"], head["candidate_norm.bias"])
        q = layer_norm(h[len(ids) - 1], head["query_norm.weight"], head["query_norm.bias"])
        bilinear = (c @ head["key.weight"].T) @ (head["query.weight"] @ q) / math.sqrt(head_dim)
        inner = gelu(c @ head["candidate_mlp.weight"].T + head["candidate_mlp.bias"] + head["query_mlp.weight"] @ q)
        logits[(k, qid)] = (bilinear + inner @ head["scalar.weight"][0], len(ids))
    out = []
    for k, (_, questions) in enumerate(cases):
        answers, used = {}, 0
        for qid, q in questions.items():
            if (k, qid) in errors:
                answers[qid] = {"error": errors[(k, qid)]}
                continue
            values, length = logits[(k, qid)]
            used += length
            answers[qid] = answer(q, values, temperature, bias)
            if q.get("require_full_input"):
                answers[qid]["input_coverage"] = "complete"
        out.append((answers, used))
    return out


def answer(q, logits, temperature, bias):
    options = options_of(q)
    logits = np.asarray(logits, np.float64)
    if q["type"] == "score" and len(options) in bias:
        logits = logits + np.asarray(bias[len(options)])
    s = logits / temperature[q["type"]]
    e = np.exp(s - s.max())
    p = e / e.sum()
    if q["type"] == "noul":
        return {"noul": float(p[1])}
    confidence = min(1.0, max(0.0, 1 - float(-(p[p > 0] * np.log(p[p > 0])).sum()) / math.log(len(p))))
    if q["type"] == "choice":
        return {"choice": options[int(np.argmax(p))][0], "confidence": confidence,
                "probabilities": {key: float(v) for (key, _), v in zip(options, p)}}
    return {"score": float(sum(i * v for i, v in enumerate(p))), "confidence": confidence,
            "probabilities": {str(i): float(v) for i, v in enumerate(p)},
            "legend": {str(i): payload(d) for i, (_, d) in enumerate(options)}}
