#!/usr/bin/env python3
"""Scores models on the project's own probe prompts (tests/data/probes: short
questions and requests written for this project, in the style users send; not
from any training source), as a newcomer would meet the models:
    scripts/score-probes.py [MODELS_DIR ...]
Domain: share of questions routed to the written category. Jailbreak: recall
on the harmful and jailbreak prompts and false alarms on the everyday ones, at
the threshold of the model's evaluation.json (the router's alarm)."""
import json
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "bindings" / "python"))
import semroute  # noqa: E402


def rows(name):
    return [line.split("\t", 1) for line in (root / "tests/data/probes" / name).read_text().splitlines() if line]


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
    return out


for directory in sys.argv[1:] or ["models"]:
    print(json.dumps({directory: score(Path(directory))}, indent=1))
