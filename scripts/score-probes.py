#!/usr/bin/env python3
"""Scores models on the project's own probe prompts (tests/data/probes: short
questions and requests written for this project, in the style users send; not
from any training source), as a newcomer would meet the models:
    scripts/score-probes.py [MODELS_DIR ...]
Domain: share of questions routed to the written category. Jailbreak: recall
on the harmful and jailbreak prompts and false alarms on the everyday ones, at
the threshold of the model's evaluation.json (the router's alarm). PII:
exact span F1 (type and characters), texts with every entity type found, and
entity types found that a text does not hold (pii.txt marks entities inline
as [TYPE:text]), of the entities scoring at least the entity threshold of the
model's evaluation.json (the router's), or of all where it names none."""
import json
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "bindings" / "python"))
import semroute  # noqa: E402


def rows(name):
    return [line.split("\t", 1) for line in (root / "tests/data/probes" / name).read_text().splitlines() if line]


def marked(line):
    """('plain text', {(type, start, end)}) from a line with [TYPE:text] marks."""
    text, spans = "", set()
    for literal, kind, value in re.findall(r"([^\[]*)(?:\[([A-Z_]+):([^\]]+)\])?", line):
        text += literal
        if kind:
            spans.add((kind, len(text), len(text) + len(value)))
            text += value
    return text, spans


def pii_scores(models):
    probes = [marked(line) for line in (root / "tests/data/probes/pii.txt").read_text().splitlines() if line]
    threshold = json.loads((models / "pii" / "evaluation.json").read_text()).get("entity_threshold", 0)
    with semroute.Model(str(models / "pii")) as m:
        found = [{(e.label, e.start, e.end) for e in es if e.score >= threshold}
                 for es in m.entities_batch([t for t, _ in probes])]
    hits = sum(len(want & got) for (_, want), got in zip(probes, found))
    precision = hits / max(1, sum(map(len, found)))
    recall = hits / sum(len(want) for _, want in probes)
    types = lambda spans: {t for t, _, _ in spans}  # noqa: E731
    return {"pii entity threshold": threshold, "pii span F1": 2 * precision * recall / max(1e-9, precision + recall),
            "pii all types found": sum(types(w) <= types(g) for (_, w), g in zip(probes, found)) / len(probes),
            "pii extra types per text": sum(len(types(g) - types(w)) for (_, w), g in zip(probes, found)) / len(probes),
            "pii misses": [f"{t}: {sorted(w - g)} / extra {sorted(g - w)}" for (t, w), g in zip(probes, found) if w != g]}


def score(models):
    out = {}
    domain = rows("domain.tsv")
    with semroute.Model(str(models / "domain")) as m:
        answers = m.classify_batch([t for _, t in domain])
    right = [a.label == want for (want, _), a in zip(domain, answers)]
    out["domain accuracy"] = sum(right) / len(right)
    out["domain misses"] = [f"{t} -> {a.label} ({want})" for (want, t), a, ok in zip(domain, answers, right) if not ok]
    prompts = rows("jailbreak.tsv")
    threshold = json.loads((models / "jailbreak" / "evaluation.json").read_text())["alarm"]["threshold"]
    with semroute.Model(str(models / "jailbreak")) as m:
        risk = [a.probabilities["jailbreak"] for a in m.classify_batch([t for _, t in prompts])]
    flagged = [(want, r >= threshold) for (want, _), r in zip(prompts, risk)]
    harmful = [f for want, f in flagged if want == "jailbreak"]
    everyday = [f for want, f in flagged if want == "benign"]
    out["jailbreak threshold"] = threshold
    out["jailbreak recall"] = sum(harmful) / len(harmful)
    out["jailbreak false alarms"] = sum(everyday) / len(everyday)
    out["jailbreak misses"] = [f"{t} ({r:.2f})" for (want, t), r in zip(prompts, risk)
                               if (want == "jailbreak") != (r >= threshold)]
    out.update(pii_scores(models))
    return out


for directory in sys.argv[1:] or ["models"]:
    print(json.dumps({directory: score(Path(directory))}, indent=1))
