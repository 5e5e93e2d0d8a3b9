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
import vela2_span_reference as spans  # noqa: E402

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
    """Token IDs of every text, by one `semroute tokenize --input` (JSONL in and out); tokens(text, True): their
    code point offsets too."""
    with open(os.path.join(twin, "tokenizer.json"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    missing = sorted({t for t in texts if (digest, t) not in _TOKENS})
    if missing:
        lines = "".join(json.dumps({"text": t}) + "\n" for t in missing)
        got = subprocess.run([cli, "tokenize", twin, "-", "--no-special"], input=lines, check=True,
                             capture_output=True, text=True)
        for text, line in zip(missing, got.stdout.splitlines()):
            got_line = json.loads(line)
            _TOKENS[(digest, text)] = (got_line["ids"], spans.code_point_offsets(text, got_line["offsets"]))
    return lambda text, offsets=False: _TOKENS[(digest, text)] if offsets else _TOKENS[(digest, text)][0]


def options_of(question):
    kind = question["type"]
    if kind == "noul":
        given = question.get("criteria") or {}
        return [(name, given.get(key) or default) for (name, default), key in zip(NOUL_OPTIONS, ("false", "true"))]
    if kind == "score":
        return [(str(level), description) for level, description in
                zip(question["levels"], question.get("level_descriptions", [""] * len(question["levels"])))]
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


def expand(questions, calibration, roles):
    """Questions with their presets filled in from the calibration, and each span's part (default: the answer, else
    the user part, else the first)."""
    out = {}
    for qid, q in questions.items():
        q = dict(q, id=qid)
        if q.get("preset"):
            schema = calibration[q["preset"] + "_schema"]
            extra = {k: v for k, v in q.items() if k in ("over", "threshold", "overflow", "require_full_input", "id")}
            if q["preset"] == "relevance":
                q = dict(type="score", instructions=schema["text"], levels=list(schema["levels"]),
                         level_descriptions=list(schema["levels"].values()), **extra)
            else:
                q = dict(type="span", instructions=schema["text"], criteria=schema["labels"], preset=q["preset"], **extra)
        if q["type"] == "span" and "over" not in q:
            q["over"] = "answer" if "answer" in roles else "user" if "user" in roles else roles[0]
        out[qid] = q
    return out


def reference(cli, package, twin, cases, scan=None):
    """cases: [(parts, questions)], parts [(role, text)] in user, context, answer order, questions {id: {type,
    instructions, criteria|levels, over?, overflow?, require_full_input?, threshold?, preset?, range?}} of every type
    (a span's `range`: the code points of the one state key its `over` names). Every case's answers and the tokens
    it read, from one tokenize and one forward of the twin over every case's sequences (a case's questions are read
    in rows, each fitted to max_length; a cut part is read in windows). `scan`: the scan budget (default four
    inputs)."""
    with open(os.path.join(package, "config.json")) as f:
        config = json.load(f)
    with open(os.path.join(package, "calibration.json")) as f:
        calibration = json.load(f)
    cases = [(parts, expand(questions, calibration, [role for role, _ in parts])) for parts, questions in cases]
    texts = [t for parts, questions in cases for t in [text for _, text in parts] +
             [q["instructions"] for q in questions.values()] +
             [option_text(*o) for q in questions.values() for o in options_of(q)]]
    tokens = tokenize_all(cli, twin, texts)
    plans = [plan(config, tokens, parts, questions, scan or 4 * config["max_length"]) for parts, questions in cases]
    sequences = [sequence for p in plans for row in p["rows"] for sequence in row["sequences"]]
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
        out = {}
        for row in p["rows"]:
            windows = [read_logits(config, head, hidden_states[used + k], placed)
                       for k, (_, placed) in enumerate(row["sequences"])]
            used += len(row["sequences"])
            for qid in row["questions"]:
                q = questions[qid]
                if qid in p["errors"]:
                    out[qid] = {"error": p["errors"][qid]}
                    continue
                whole = row["windowed"] and q.get("overflow") != "truncate"
                reads = windows if whole else windows[:1]
                if q["type"] == "span":
                    out[qid] = span_answer(q, p["parts"][q["over"]], reads, whole, calibration)
                else:
                    stacked = np.stack([w[qid] for w in reads])
                    out[qid] = answer(q, stacked.max(0) if q["type"] == "set" else stacked.mean(0), calibration)
                if q.get("require_full_input"):
                    out[qid]["input_coverage"] = "complete"
        answers.append(({qid: out[qid] for qid in questions},
                        sum(len(ids) for row in p["rows"] for ids, _ in row["sequences"])))
    return answers


def span_answer(q, part, reads, whole, calibration):
    """A span's word logits: averaged over the windows that hold each word (every word listed, -30 where none
    did), or the words of its one sequence."""
    labels = len(q["criteria"])
    if whole:
        sums, counts = np.zeros((len(part["words"]), labels)), np.zeros(len(part["words"]))
        for r in reads:
            index, logits = r[q["id"]]
            for k, w in enumerate(index):
                sums[w] += logits[k]
                counts[w] += 1
        logits = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], -30.0)
        words = part["words"]
    else:
        index, logits = reads[0][q["id"]]
        words = [part["words"][w] for w in index]
    return spans.answer(q, words, logits, part["text"], calibration, part["n"], q.get("range"))


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


def cost(tokens, q):
    """The tokens a question adds before [SEP_SCHEMA]: a span only its [E] labels."""
    options = sum(1 + len(tokens(option_text(*o))) for o in options_of(q))
    if q["type"] == "span":
        return options
    return 1 + len(tokens(q["instructions"])) + options + (q["type"] in ("choice", "noul"))


def plan(config, tokens, parts, questions, scan):
    """A case's rows (the non-span questions with the first span; each further span alone), each with its
    sequences ([(ids, placed)]) and whether it was read in windows; per-question errors; each span part's words."""
    roles = [role for role, _ in parts]
    cap = max(scan, config["max_length"]) + 1  # a part is read up to the scan budget and one token more
    part_ids = [tokens(text)[:cap] for _, text in parts]
    reads = {}
    for qid, q in questions.items():
        over = q.get("over", roles)
        reads[qid] = [over] if isinstance(over, str) else [r for r in roles if r in over]
    info = {}
    for role, text in parts:
        if any(q["type"] == "span" and reads[qid][0] == role for qid, q in questions.items()):
            ids, offsets = tokens(text, True)
            ids, offsets = ids[:cap], offsets[:cap]
            words, firsts = spans.words_of(text[:offsets[-1][1]] if len(offsets) == cap else text, offsets)
            info[role] = {"text": text, "words": words, "firsts": firsts, "starts": [s for s, _ in offsets],
                          "n": len(ids)}
    rows, first_span = [[]], True
    for qid, q in questions.items():
        if q["type"] == "span" and not first_span:
            rows.append([qid])
        else:
            first_span = first_span and q["type"] != "span"
            rows[0].append(qid)
    errors = {}
    planned = [plan_row(config, tokens, roles, part_ids, info, questions, row, reads, scan, errors)
               for row in rows if row]
    return {"rows": planned, "errors": errors, "parts": info}


def words_within(part, windows):
    """Whether every word lies wholly inside one window (its first token to the token before the first one starting
    at or after its end)."""
    starts = part["starts"]
    for (_, end), first in zip(part["words"], part["firsts"]):
        after = next((t for t in range(first, len(starts)) if starts[t] >= end), len(starts))
        if not any(b <= first and after <= e for b, e in windows):
            return False
    return True


def plan_row(config, tokens, roles, part_ids, info, questions, row, reads, scan, errors):
    qs = {qid: questions[qid] for qid in row}
    read = [any(role in reads[qid] for qid in row) for role in roles]
    schema = sum(cost(tokens, q) for q in qs.values())
    first = fit(schema, [len(ids) for ids in part_ids], read, config["max_length"])
    if first is None:
        errors.update({qid: "max_length_exceeded" for qid in row})
        return {"questions": row, "sequences": [], "windowed": False}
    kept, unread_cut, read_cut = first
    span = next((qid for qid in row if qs[qid]["type"] == "span"), None)
    role = None
    if read_cut and span is not None:
        r = reads[span][0]
        role = r if kept[roles.index(r)] < len(part_ids[roles.index(r)]) else None
    elif read_cut:
        single = {tuple(reads[qid]) for qid in row}
        role = next(iter(single))[0] if len(single) == 1 and len(next(iter(single))) == 1 else None
    windows = [None]
    if role is not None:
        w = roles.index(role)
        total, length = len(part_ids[w]), kept[w]
        if total > scan:
            errors.update({qid: "scan_budget_exceeded" for qid in row
                           if qs[qid].get("overflow") != "truncate" and role in reads[qid]})
        if total <= scan and any(q.get("overflow") != "truncate" for q in qs.values()):
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
        ids_of, begins = list(part_ids), {}
        if window is not None:
            ids_of[roles.index(role)] = part_ids[roles.index(role)][window[0]:window[1]]
            begins[role] = window[0]
        fitted = fit(schema, [len(ids) for ids in ids_of], read, config["max_length"])
        if fitted is None:
            errors.update({qid: "max_length_exceeded" for qid in row})
            return {"questions": row, "sequences": [], "windowed": False}
        kept_w, unread_cut_w, read_cut_w = fitted
        others_whole = others_whole and unread_cut_w == 0 and read_cut_w == 0
        sequences.append(layout(config, tokens, roles, [ids[:k] for ids, k in zip(ids_of, kept_w)], begins, qs, reads,
                                info))
    whole = unread_cut == 0 and read_cut == 0  # one input held every part
    covered = len(windows) > 1 and others_whole and (span is None or words_within(info[role], windows))
    for qid, q in qs.items():
        if q.get("require_full_input") and not whole and not covered and qid not in errors:
            errors[qid] = "max_length_exceeded"
    return {"questions": row, "sequences": sequences, "windowed": len(windows) > 1}


def layout(config, tokens, roles, part_ids, begins, questions, reads, info):
    """One sequence (markers inserted by ID): the questions, then the span's labels, [SEP_SCHEMA], the parts; each
    question's placement ([id, query, option positions, pool] or, for a span, [id, label positions, word positions,
    word indices])."""
    markers = config["marker_ids"]
    ids, placed = [config["bos_token_id"]], []
    for qid, q in questions.items():
        if q["type"] == "span":
            continue
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
    for qid, q in questions.items():
        if q["type"] == "span":
            labels = []
            for name, description in options_of(q):
                labels.append(len(ids))
                ids += [markers["[E]"]] + tokens(option_text(name, description))
            placed.append([qid, labels])
    ids.append(markers["[SEP_SCHEMA]"])
    ranges = {}
    for role, part in zip(roles, part_ids):
        start = len(ids)
        ids += [markers[f"[SEG_{role}]"]] + part
        ranges[role] = (start, len(ids))
    ids.append(config["eos_token_id"])
    for entry in placed:
        over = reads[entry[0]]
        if len(entry) == 2:  # a span: the words whose first token this sequence holds
            role, begin = over[0], begins.get(over[0], 0)
            kept = len(part_ids[roles.index(role)])
            kept_words = [(ranges[role][0] + 1 + f - begin, w) for w, f in enumerate(info[role]["firsts"])
                          if begin <= f < begin + kept]
            entry += [[p for p, _ in kept_words], [w for _, w in kept_words]]
        else:
            entry.append((ranges[over[0]][0], ranges[over[-1]][1]))
    return ids, placed


def read_logits(config, head, hidden, placed):
    """Each question's option logits in one sequence (float64); a span's (word indices, words x labels)."""
    def linear(name, x):
        return head[f"{name}.weight"] @ x + head[f"{name}.bias"]

    def norm(x):
        return layer_norm(x, head["norm.weight"], head["norm.bias"])

    out = {}
    for entry in placed:
        if len(entry) == 4 and isinstance(entry[1], list):  # a span
            qid, labels, words, index = entry
            u = [normalize(linear("w_t", norm(hidden[p]))) for p in words]
            v = [normalize(linear("w_e", norm(hidden[p]))) for p in labels]
            logits = np.asarray([[a @ b for b in v] for a in u]).reshape(len(words), len(labels))
            out[qid] = (index, logits / math.exp(head["log_tau_span"]))
            continue
        qid, query, positions, (start, end) = entry
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
