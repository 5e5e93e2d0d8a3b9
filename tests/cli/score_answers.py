#!/usr/bin/env python3
"""Scores a model's answers (`semroute classify|tokens --input`, JSONL) on
prompts with known right answers, for tests/cli/default_models.sh.

  score_answers.py classify|tokens NAME FLOOR PROMPTS.tsv ANSWERS.jsonl CONFIG.json

PROMPTS.tsv holds one prompt a line: the right answer, a tab, the text. For
classify the answer is a label; for tokens it is the entities the text holds,
TYPE:text separated by ';' ('-' for none). CONFIG.json (a model's config.json
or an adapter's labels.json) gives the model's labels.

Two kinds of checks. Form, whatever the model: an answer for every prompt,
labels of the model only, probabilities summing to 1, the top label the most
probable; entity offsets that cut the entity's text out of the prompt.
Quality: the share of right answers must reach FLOOR. For tokens, each
expected entity is one answer (right when found, type and text exact), and
so is each prompt that holds none (right when none is found). Exits 1 when
either fails, printing why and the misses."""

import json
import math
import sys


def model_labels(config_path):
    id2label = json.load(open(config_path))["id2label"]
    return {label.split("-", 1)[-1] if label[:2] in ("B-", "I-") else label for label in id2label.values()}


def read_prompts(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        expected, text = line.rstrip("\n").split("\t")
        rows.append((expected, text))
    return rows


def check_classification(answer, labels):
    probabilities = answer["probabilities"]
    problems = []
    if set(probabilities) != labels:
        problems.append(f"labels {sorted(probabilities)} are not the model's {sorted(labels)}")
    if not math.isclose(sum(probabilities.values()), 1.0, abs_tol=1e-4):
        problems.append(f"probabilities sum to {sum(probabilities.values())}")
    if answer["label"] != max(probabilities, key=probabilities.get):
        problems.append(f"top label {answer['label']} is not the most probable")
    if not math.isclose(answer["confidence"], probabilities.get(answer["label"], -1), abs_tol=1e-6):
        problems.append("confidence is not the top label's probability")
    return problems


def check_entities(answer, text, types):
    problems = []
    raw = text.encode("utf-8")
    for e in answer["entities"]:
        if e["type"] not in types:
            problems.append(f"entity type {e['type']} is not the model's")
        if raw[e["begin"]:e["end"]].decode("utf-8", "replace") != e["text"]:
            problems.append(f"entity [{e['begin']}, {e['end']}) does not cut out {e['text']!r}")
        if not 0.0 <= e["score"] <= 1.0:
            problems.append(f"entity score {e['score']}")
    return problems


def score_classify(rows, answers, labels):
    right, misses, problems = 0, [], []
    for (expected, text), answer in zip(rows, answers):
        if expected not in labels:
            problems.append(f"{text!r}: expected label {expected} is not the model's")
        problems += [f"{text!r}: {p}" for p in check_classification(answer, labels)]
        if answer["label"] == expected:
            right += 1
        else:
            misses.append(f"{text!r} -> {answer['label']} {answer['confidence']:.2f}, right: {expected}")
    return right, len(rows), misses, problems


def score_tokens(rows, answers, types):
    right, total, misses, problems = 0, 0, [], []
    for (expected, text), answer in zip(rows, answers):
        problems += [f"{text!r}: {p}" for p in check_entities(answer, text, types)]
        found = {(e["type"], e["text"]) for e in answer["entities"]}
        if expected == "-":  # right when nothing is found
            total += 1
            right += not found
            if found:
                misses.append(f"{text!r} holds no entity, found {sorted(found)}")
            continue
        for wanted in expected.split(";"):
            kind, span = wanted.split(":", 1)
            if kind not in types:
                problems.append(f"{text!r}: expected type {kind} is not the model's")
            total += 1
            if (kind, span) in found:
                right += 1
            else:
                misses.append(f"{text!r}: no {kind} {span!r} (found {sorted(found)})")
    return right, total, misses, problems


def main():
    command, name, floor, prompts_path, answers_path, config_path = sys.argv[1:]
    rows = read_prompts(prompts_path)
    answers = [json.loads(line) for line in open(answers_path, encoding="utf-8")]
    labels = model_labels(config_path)
    problems = []
    if [a.get("line") for a in answers] != list(range(1, len(rows) + 1)) or any("error" in a for a in answers):
        problems.append(f"{len(answers)} answers for {len(rows)} prompts, or errors among them")
    score = score_classify if command == "classify" else score_tokens
    right, total, misses, more = score(rows, answers, labels)
    problems += more
    accuracy = right / total if total else 0.0
    print(f"{name}: {right}/{total} right ({accuracy:.3f}), floor {float(floor):.3f}")
    for miss in misses:
        print(f"  miss {name}: {miss}")
    for problem in problems:
        print(f"FAIL {name}: {problem}")
    if accuracy < float(floor):
        print(f"FAIL {name}: accuracy {accuracy:.3f} is below the floor {float(floor):.3f}")
    return 1 if problems or accuracy < float(floor) else 0


if __name__ == "__main__":
    sys.exit(main())
