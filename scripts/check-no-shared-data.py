#!/usr/bin/env python3
"""Fails if any text of the licensed training data (shared/data) appears in a
file the repository tracks: the project ships the models it trains, never the
data (shared/data/README.md). Every data text of 40 characters or more is
looked for by its first 40 characters (whitespace runs collapsed); shorter
ones, and those with fewer than 25 letters (rules of "=" signs), are too
generic to tell apart from ordinary text, and licence texts (LICENSE*, and
verbatim copies of the data's LICENSES files) are the licences themselves. Exit 77 (skipped)
when the data directory is absent.
    check-no-shared-data.py REPO_DIR [DATA_DIR]"""
import json, os, re, subprocess, sys

repo = sys.argv[1]
data = sys.argv[2] if len(sys.argv) > 2 else os.path.join(repo, "..", "shared", "data")
if not os.path.isdir(data):
    print(f"no data directory at {data}: skipped")
    sys.exit(77)

needles = set()

def squeeze(s):
    return re.sub(r"\s+", " ", s)

def add(text):
    text = squeeze(text).strip()
    if len(text) >= 40 and sum(c.isalpha() for c in text[:40]) >= 25:
        needles.add(text[:40])

for root, dirs, files in os.walk(data):
    dirs[:] = [d for d in dirs if d != "LICENSES"]  # the licences travel with the models
    for name in files:
        if name.endswith(".jsonl"):
            with open(os.path.join(root, name), encoding="utf-8") as f:
                for line in f:
                    add(json.loads(line)["text"])
        elif name.endswith(".txt"):
            with open(os.path.join(root, name), encoding="utf-8") as f:
                for line in f:
                    add(line)

def repository_files():
    """The tracked files; every file but build trees where this is no git checkout."""
    listed = subprocess.run(["git", "-C", repo, "ls-files", "-z"], capture_output=True)
    if listed.returncode == 0:
        return list(filter(None, listed.stdout.decode().split("\0")))
    files = []
    for root, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build")]
        files += [os.path.relpath(os.path.join(root, n), repo) for n in names]
    return files

# Verbatim copies of the data's own licence texts (models/LICENSES carries
# them): a book's licence page may also be a paragraph of the corpus.
licences_dir = os.path.join(data, "LICENSES")
licence_texts = {open(os.path.join(licences_dir, n), "rb").read() for n in os.listdir(licences_dir)} \
    if os.path.isdir(licences_dir) else set()

found = []
for path in repository_files():
    full = os.path.join(repo, path)
    if os.path.basename(path).startswith("LICENSE") or not os.path.isfile(full) or os.path.getsize(full) > 20_000_000:
        continue
    with open(full, "rb") as f:
        raw = f.read()
    if b"\0" in raw[:4096] or raw in licence_texts:
        continue  # binary (weights), or a licence text as the data ships it
    text = squeeze(raw.decode("utf-8", "replace"))
    starts = {text[i:i + 40] for i in range(max(0, len(text) - 39))}
    hits = needles & starts
    if hits:
        found.append((path, sorted(hits)[0]))
for path, hit in found:
    print(f"{path}: holds training data text starting {hit!r}")
print(f"checked {len(needles)} data texts against the tracked files: {'FOUND' if found else 'none found'}")
sys.exit(1 if found else 0)
