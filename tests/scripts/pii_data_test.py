#!/usr/bin/env python3
"""scripts/pii-data.py, the PII model's generated sentences: the same file
whatever Python's hash seed, every span a clean slice of its text with a type
the shipped PII model knows, every one of those types present, and the
entity-free rows free of entities. Exits 77 (skipped) without WordNet
(wordnet-base) or Faker (python3-fake-factory).
    tests/scripts/pii_data_test.py REPO_DIR"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

repo = Path(sys.argv[1])
sys.path.append("/usr/lib/python3/dist-packages")  # Debian's Faker, as the script finds it
try:
    import faker  # noqa: F401
except ImportError:
    sys.exit(77)
if not Path("/usr/share/wordnet/data.noun").exists():
    sys.exit(77)

ROWS, PLAIN = 230, 40  # every carrier twice and more


def generate(path, hash_seed):
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    subprocess.run([sys.executable, str(repo / "scripts/pii-data.py"), str(path), "--rows", str(ROWS),
                    "--plain-rows", str(PLAIN)], check=True, env=env, stdout=subprocess.DEVNULL)
    return path.read_bytes()


def fail(message):
    print("FAIL", message)
    sys.exit(1)


with tempfile.TemporaryDirectory() as scratch:
    first = generate(Path(scratch) / "a.jsonl", "1")
    if generate(Path(scratch) / "b.jsonl", "2") != first:
        fail("two runs differ: the output depends on the hash seed")
rows = [json.loads(line) for line in first.decode().splitlines()]
if len(rows) != ROWS + PLAIN:
    fail(f"{len(rows)} rows, not {ROWS + PLAIN}")

config = json.loads((repo / "models/pii/config.json").read_text())
known = {label[2:] for label in config["id2label"].values() if label != "O"}
seen = set()
for row in rows:
    text = row["text"].encode()
    end = 0
    for span in row["spans"]:
        if not end <= span["start"] < span["end"] <= len(text):
            fail(f"span {span} out of order or outside {row['text']!r}")
        value = text[span["start"]:span["end"]].decode()  # raises on a cut UTF-8 sequence
        if value != value.strip():
            fail(f"span {value!r} has surrounding white space in {row['text']!r}")
        if span["label"] not in known:
            fail(f"type {span['label']} is not one the PII model knows")
        seen.add(span["label"])
        end = span["end"]
for row in rows[ROWS:]:
    if row["spans"] or any(c.isdigit() for c in row["text"]):
        fail(f"entity-free row {row['text']!r} holds an entity or a number")
if seen != known:
    fail(f"types never generated: {sorted(known - seen)}")
print(f"pii data: ok ({len(rows)} rows, {len(seen)} types)")
