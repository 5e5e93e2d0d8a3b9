#!/usr/bin/env python3
"""Markdown tables of a model's evaluation.json (written by `semroute train` /
`semroute calibrate`), for model cards: every part (validation, test, out of
source) by source, with the temperature and alarm threshold.
    scripts/evaluation-tables.py MODEL_DIR [MODEL_DIR ...]"""
import json
import sys
from pathlib import Path

PARTS = ["validation", "test", "out_of_source"]
PART_NAMES = {"validation": "validation", "test": "test (held out)", "out_of_source": "**out of source**"}


def rows(report):
    for part in PARTS:
        sources = report.get("parts", {}).get(part, {})
        # "all" first, then each source (a part of one source shows that source only).
        names = sorted(sources, key=lambda s: (s != "all", s))
        if len(names) == 2 and "all" in names:
            names = [n for n in names if n != "all"]
        for source in names:
            yield part, source, sources[source]


def sequence_table(report):
    alarm = report.get("alarm")
    head = ["part", "source", "examples", "accuracy", "ECE raw → calibrated"]
    if alarm:
        head += [f"{alarm['label']} recall", "false alarms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for part, source, s in rows(report):
        cells = [PART_NAMES[part], source, str(s["examples"]), f"{s['accuracy']:.3f}",
                 f"{s['ece']:.3f} → {s['ece_scaled']:.3f}"]
        if alarm:
            a = s["alarm"]
            cells += [f"{a['recall']:.3f} ({a['positives']})" if a["positives"] else "–",
                      f"{a['false_alarm_rate']:.3f} ({a['negatives']})" if a["negatives"] else "–"]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [f"Temperature {report['temperature']:.3f}, fitted on validation (saved as `semroute_temperature`)."]
    if alarm:
        notes.append(f"Alarm: `{alarm['label']}` probability ≥ **{alarm['threshold']:.3f}**, the threshold with the "
                     f"most recall whose validation false-alarm rate is at most {alarm['max_false_alarm_rate']:g}. "
                     "Recall counts the rows that should raise it (their number in brackets), false alarms the others.")
    return "\n".join(lines) + "\n\n" + " ".join(notes)


def token_table(report):
    head = ["part", "source", "texts", "span precision", "span recall", "span F1", "all types found",
            "extra types per text"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for part, source, s in rows(report):
        lines.append("| " + " | ".join([PART_NAMES[part], source, str(s["texts"])] + [
            f"{s[k]:.3f}" for k in ("precision", "recall", "f1", "all_types_found", "extra_types_per_text")]) + " |")
    by = {"word": "word by word (a word takes its first token's label)", "token": "token by token"}
    read = by[report.get("entity_aggregation", "token")]
    picked = " (the threshold with the best span F1 on validation)" if report.get("entity_threshold_rule") == "best validation span F1" else ""
    return "\n".join(lines) + (f"\n\nSpans read {read}; entities scoring ≥ {report['entity_threshold']:g}{picked}; a span "
                               "counts when its type and bytes both match. *All types found*: texts with entities "
                               "whose every entity type was found; *extra types*: types found that the text does not "
                               "hold.")


def main():
    for arg in sys.argv[1:]:
        report = json.loads((Path(arg) / "evaluation.json").read_text())
        print(f"### {arg}\n")
        print(sequence_table(report) if report["task"] == "sequence" else token_table(report))
        print()


if __name__ == "__main__":
    main()
