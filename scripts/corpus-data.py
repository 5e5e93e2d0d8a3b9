#!/usr/bin/env python3
"""Training text from the licensed textbook corpus (shared/data/corpus: OpenStax,
Lessons In Electric Circuits and the supplement's computer-science and logic
books, CC BY; see its README) for the default models. Nothing of it is ever
written into the repository: the outputs go to OUT_DIR (the recipe's work
directory).

  pretrain.jsonl   every paragraph, glossary term, exercise and caption
                   (but the held-out parts below),
                   long paragraphs cut at sentence ends into rows of at most
                   about 600 characters (a 128-token row): masked-LM text.
  domain.jsonl     weakly labelled domain examples, the label the book's (or
                   chapter's) category from the corpus: glossary terms as
                   short questions ("What is osmosis?", seeded templates) and
                   exercises of at most 300 characters as they are.
                   `source` is "corpus:<book>", so the recipe's --hold-out
                   can keep whole books out.
  held_out.jsonl   the same kinds of examples from the held-out books: per
                   category the second-largest book when it has at least
                   40,000 words, else (one main book: psychology,
                   chemistry, economics, biology, …) every seventh chapter of
                   its largest book; the out-of-source check.

Prints a JSON summary: rows and words per file, examples per category, the
held-out books and chapters.

  scripts/corpus-data.py OUT_DIR [--corpus ../shared/data/corpus]
"""
import argparse
import collections
import json
import os
import random
import re

FILES = ["openstax.jsonl", "openstax_prior_ccby.jsonl", "engineering_liec.jsonl", "supplement.jsonl"]
MAX_ROW_CHARS = 600
MAX_EXERCISE_CHARS = 300
MIN_SECOND_BOOK_WORDS = 40000
QUESTION_TEMPLATES = ["What is {}?", "What does {} mean?", "Explain {}.", "Define {}.", "What is meant by {}?",
                      "Can you explain {} to me?", "How would you describe {}?", "Tell me about {}."]


def read_corpus(corpus):
    for name in FILES:
        path = os.path.join(corpus, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    yield json.loads(line)


def rows_of(text):
    """The text cut at sentence ends into pieces of at most MAX_ROW_CHARS (a longer sentence alone)."""
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    rows, row = [], ""
    for s in sentences:
        if row and len(row) + 1 + len(s) > MAX_ROW_CHARS:
            rows.append(row)
            row = s
        else:
            row = f"{row} {s}" if row else s
    if row:
        rows.append(row)
    return rows


def held_out_parts(records):
    """Per category: the held-out book, or (book, chapters) of its largest book."""
    words = collections.defaultdict(collections.Counter)
    chapters = collections.defaultdict(list)
    for r in records:
        words[r["category"]][r["book"]] += len(r["text"].split())
        if r["chapter"] not in chapters[(r["category"], r["book"])]:
            chapters[(r["category"], r["book"])].append(r["chapter"])
    out = {}
    for category, books in sorted(words.items()):
        ranked = books.most_common()
        if len(ranked) > 1 and ranked[1][1] >= MIN_SECOND_BOOK_WORDS:
            out[category] = {"book": ranked[1][0]}
        else:
            book = ranked[0][0]
            out[category] = {"book": book, "chapters": chapters[(category, book)][3::7]}
    return out


def is_held_out(r, held):
    h = held[r["category"]]
    return r["book"] == h["book"] and ("chapters" not in h or r["chapter"] in h["chapters"])


def examples(r, rng):
    """Weakly labelled domain examples of one record (none for paragraphs and captions)."""
    text = r["text"].strip()
    if r["kind"] == "term" and ":" in text:
        term = text.split(":", 1)[0].strip()
        if 0 < len(term) <= 60:
            yield rng.choice(QUESTION_TEMPLATES).format(term)
    elif r["kind"] == "exercise" and 20 <= len(text) <= MAX_EXERCISE_CHARS:
        yield text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--corpus", default="../shared/data/corpus")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    records = list(read_corpus(args.corpus))
    held = held_out_parts(records)
    rng = random.Random(1)
    summary = {"held_out": held, "pretrain": {"rows": 0, "words": 0}, "domain": collections.Counter(),
               "held_out_examples": collections.Counter()}
    with open(os.path.join(args.out, "pretrain.jsonl"), "w", encoding="utf-8") as pretrain, \
            open(os.path.join(args.out, "domain.jsonl"), "w", encoding="utf-8") as domain, \
            open(os.path.join(args.out, "held_out.jsonl"), "w", encoding="utf-8") as held_out:
        for r in records:
            if is_held_out(r, held):  # held out of the pretraining too: nothing of it is seen before the check
                for text in examples(r, rng):
                    held_out.write(json.dumps({"text": text, "label": r["category"], "source": "corpus:" + r["book"],
                                               "kind": r["kind"]}) + "\n")
                    summary["held_out_examples"][r["category"]] += 1
                continue
            for row in rows_of(r["text"]):
                pretrain.write(json.dumps({"text": row, "source": "corpus:" + r["book"]}) + "\n")
                summary["pretrain"]["rows"] += 1
                summary["pretrain"]["words"] += len(row.split())
            for text in examples(r, rng):
                domain.write(json.dumps({"text": text, "label": r["category"], "source": "corpus:" + r["book"],
                                         "kind": r["kind"]}) + "\n")
                summary["domain"][r["category"]] += 1
    print(json.dumps(summary, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
