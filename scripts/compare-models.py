#!/usr/bin/env python3
"""The before/after table of models/README.md: two sets of default models
scored on the same rows, through the inference engine.
    scripts/compare-models.py OLD_MODELS NEW_MODELS [OLD_CHECKS NEW_CHECKS] > table.md
Each OLD task model is copied aside with NEW's training_summary.json (so
`semroute calibrate` rebuilds NEW's splits: a text's split follows from the
text alone) and calibrated there: its temperature and alarm threshold are
re-fitted on NEW's validation split by the same rule, so both alarm at the
same validation false-alarm budget. CHECKS are the recipes' out-of-source
domain runs (MedQuAD held out), read as they are. SEMROUTE_CLI names the CLI
(default build/cli/semroute)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# (task, label, part, source, key[, sub-key]); sources as evaluation.json names them.
ROWS = [
    ("domain", "accuracy, test split, all sources", "test", "all", "accuracy"),
    ("domain", "accuracy, test split, MMLU-Pro exam items", "test", "mmlu-pro", "accuracy"),
    ("domain", "accuracy, test split, MMLU short questions", "test", "mmlu", "accuracy"),
    ("domain", "accuracy, test split, MedQuAD consumer health questions", "test", "medquad", "accuracy"),
    ("domain", "accuracy, test split, WordNet short questions", "test", "wordnet", "accuracy"),
    ("domain", "accuracy, test split, textbook glossary terms as questions", "test", "corpus-term", "accuracy"),
    ("domain", "accuracy, test split, textbook section titles as requests", "test", "corpus-section", "accuracy"),
    ("domain", "accuracy, test split, textbook exercises", "test", "corpus-exercise", "accuracy"),
    ("domain", "accuracy, test split, textbook sentences", "test", "corpus-sentence", "accuracy"),
    ("domain", "accuracy, held-out books, one a category (out of source)", "out_of_source", "all", "accuracy"),
    ("domain", "calibration error (ECE), test split", "test", "all", "ece_scaled"),
    ("jailbreak", "alarm threshold (the recipe's validation false-alarm budget)", None, None, "threshold"),
    ("jailbreak", "recall, jailbreak templates (test: llm-warden)", "test", "llm-warden", "alarm", "recall"),
    ("jailbreak", "recall, jailbreak templates (test: GPTFuzz)", "test", "gptfuzz", "alarm", "recall"),
    ("jailbreak", "recall, harmful requests (test: AdvBench)", "test", "advbench", "alarm", "recall"),
    ("jailbreak", "recall, harmful questions (test: HarmfulQA)", "test", "harmfulqa", "alarm", "recall"),
    ("jailbreak", "recall, harmful questions (test: SimpleSafetyTests)", "test", "simplesafetytests", "alarm",
     "recall"),
    ("jailbreak", "recall, Do-Not-Answer harmful requests (out of source)", "out_of_source", "do-not-answer", "alarm",
     "recall"),
    ("jailbreak", "recall, HarmBench harmful requests (out of source)", "out_of_source", "harmbench", "alarm",
     "recall"),
    ("jailbreak", "false alarms, benign prompts (test split)", "test", "all", "alarm", "false_alarm_rate"),
    ("jailbreak", "false alarms, safe prompts that look unsafe (test: XSTest)", "test", "xstest", "alarm",
     "false_alarm_rate"),
    ("jailbreak", "false alarms, real users' prompts (test: Arena-Hard)", "test", "arena-hard", "alarm",
     "false_alarm_rate"),
    ("jailbreak", "false alarms, everyday instructions (self-instruct, out of source)", "out_of_source",
     "self-instruct", "alarm", "false_alarm_rate"),
    ("jailbreak", "calibration error (ECE), test split", "test", "all", "ece_scaled"),
    ("pii", "entity span F1, test split (presidio + generated)", "test", "all", "f1"),
    ("pii", "entity span F1, test split, generated sentences", "test", "generated", "f1"),
    ("pii", "entity span F1, unseen templates (out of source)", "out_of_source", "all", "f1"),
    ("pii", "texts with every entity type found, unseen templates", "out_of_source", "all", "all_types_found"),
    ("pii", "extra entity types per text, test split", "test", "all", "extra_types_per_text"),
    ("pii", "extra entity types per text, unseen templates", "out_of_source", "all", "extra_types_per_text"),
]
CHECK_ROW = ("domain", "accuracy, recipe with MedQuAD held out, on MedQuAD (out of source)", "out_of_source",
             "medquad", "accuracy")


def value(evaluation, row):
    _, _, part, source, *keys = row
    if part is None:
        return evaluation.get("alarm", {}).get(keys[0])
    node = evaluation["parts"].get(part, {}).get(source)
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def rescored(old, new, task, cli, scratch):
    """OLD's task model scored on NEW's splits (a copy with NEW's summary)."""
    copy = scratch / task
    shutil.copytree(old / task, copy)
    shutil.copy(new / task / "training_summary.json", copy / "training_summary.json")
    options = json.loads((copy / "training_summary.json").read_text())["options"]
    args = [cli, "calibrate", str(copy)]
    if "alarm-label" in options:
        args += ["--alarm-label", options["alarm-label"], "--max-false-alarms", options.get("max-false-alarms", "0.05")]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return json.loads((copy / "evaluation.json").read_text())


def cell(v):
    return "n/a" if v is None else f"{v:.3f}"


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    old, new = Path(sys.argv[1]), Path(sys.argv[2])
    cli = os.environ.get("SEMROUTE_CLI", "build/cli/semroute")
    rows = [("| model | measure | previous models | these models |"), "|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as scratch:
        for task in ("domain", "jailbreak", "pii"):
            before = rescored(old, new, task, cli, Path(scratch))
            after = json.loads((new / task / "evaluation.json").read_text())
            for row in (r for r in ROWS if r[0] == task):
                rows.append(f"| {task if task != 'pii' else 'PII'} | {row[1]} | {cell(value(before, row))} | "
                            f"{cell(value(after, row))} |")
    if len(sys.argv) == 5:
        checks = [json.loads((Path(d) / "domain-medquad-held-out" / "evaluation.json").read_text())
                  for d in sys.argv[3:5]]
        rows.append(f"| domain | {CHECK_ROW[1]} | {cell(value(checks[0], CHECK_ROW))} | "
                    f"{cell(value(checks[1], CHECK_ROW))} |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
