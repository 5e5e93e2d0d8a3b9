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
                   chapter's) category from the corpus, four kinds: glossary
                   terms as short questions ("What is osmosis?", seeded
                   templates), exercises of at most 300 characters as they
                   are, section titles as requests ("Can you explain
                   valence bond theory?") and one sentence of 8-30 words
                   from a paragraph; at most PER_CATEGORY a category (each
                   kind capped, sentences filling what the others leave),
                   so that the largest books do not decide the prior.
                   `source` is "corpus-<kind>" (scored apart in the
                   cards), `book` the book.
  held_out.jsonl   the same kinds of examples from the held-out books: per
                   category the second-largest book when it has at least
                   40,000 words, else (one main book: psychology,
                   chemistry, economics, biology, …) every seventh chapter of
                   its largest book; the out-of-source check (at most
                   HELD_OUT_PER_CATEGORY a category), `source`
                   "corpus-held-out:<category>" (scored apart, a category
                   each).

  ATTRIBUTION.md   the attribution every model trained on it carries (CC BY
                   §3(a)), read from the corpus README: each book used, its
                   licence and the commit its text was read at.

With --licences DIR: ATTRIBUTION.md is also written there as textbooks.md,
beside a copy of the licence texts it names (the models' LICENSES folder).

Prints a JSON summary: rows and words per file, examples per category, the
held-out books and chapters.

  scripts/corpus-data.py OUT_DIR [--corpus ../shared/data/corpus] [--licences DIR]
"""
import argparse
import collections
import json
import os
import random
import re
import shutil

FILES = ["openstax.jsonl", "openstax_prior_ccby.jsonl", "engineering_liec.jsonl", "supplement.jsonl"]
MAX_ROW_CHARS = 600
MAX_EXERCISE_CHARS = 300
MIN_SECOND_BOOK_WORDS = 40000
LICENCE_FILES = ["OpenStax.CC-BY-4.0.txt", "ComputerNetworks-SystemsApproach.CC-BY-4.0.txt", "aosabook.CC-BY-3.0.txt",
                 "500lines.CC-BY-3.0-and-MIT.txt", "OpenDataStructures.CC-BY.txt", "forallx-yyc.CC-BY-4.0.txt",
                 "OpenLogic.CC-BY-4.0.txt"]  # in shared/data/LICENSES
PER_CATEGORY = 3000
KIND_CAPS = {"term": 1200, "exercise": 800, "section": 600}  # sentences fill the rest
HELD_OUT_PER_CATEGORY = 400
SENTENCE_WORDS = (8, 30)
SECTION_TEMPLATES = ["Can you explain {}?", "I need help understanding {}.", "What should I know about {}?",
                     "Give me an overview of {}.", "I have a question about {}.", "How does {} work?"]
GENERIC_SECTIONS = re.compile(r"^(introduction|summary|key terms|review questions|exercises|problems|glossary|"
                              r"references|further reading|chapter review|key concepts|conclusion|preface|connection for ap)\b", re.I)
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


def lower_case_words(records):
    """Capitalised words the books write lower-case more often than not inside a sentence."""
    lower, capital = collections.Counter(), collections.Counter()
    for r in records:
        if r["kind"] == "para":
            for word in re.findall(r"(?<=[a-z,;] )[A-Za-z]+", r["text"]):
                (capital if word[0].isupper() else lower)[word.lower()] += 1
    return {w for w, n in lower.items() if n > capital[w]}


def section_question(r, rng, common_words):
    """The record's section title as a request, or None for generic or slug-like titles. Title case
    goes ("Kirchhoff's Rules" -> "Kirchhoff's rules"): users do not write it."""
    title = re.sub(r"^[^\w(]+", "", r.get("section", "")).strip()  # icons some titles open with
    if not 3 <= len(title) <= 80 or GENERIC_SECTIONS.match(title) or re.fullmatch(r"[a-z0-9-]+", title):
        return None
    title = re.sub(r"\b[A-Z][a-z]+\b", lambda m: m[0].lower() if m[0].lower() in common_words else m[0], title)
    return rng.choice(SECTION_TEMPLATES).format(title.rstrip("?.:"))


def paragraph_sentence(text, rng):
    """One plain sentence of a paragraph (8-30 words, no formula), or None."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text)
                 if SENTENCE_WORDS[0] <= len(s.split()) <= SENTENCE_WORDS[1] and s[:1].isupper()
                 and s.endswith(".") and not re.search(r"[=^_{}\\]|\bFigure\b|\bTable\b", s)]
    return rng.choice(sentences) if sentences else None


def examples(r, rng, sections_seen, common_words):
    """Weakly labelled domain examples of one record, as (kind, text)."""
    text = r["text"].strip()
    if r["kind"] == "term" and ":" in text:
        term = text.split(":", 1)[0].strip()
        if 0 < len(term) <= 60:
            yield "term", rng.choice(QUESTION_TEMPLATES).format(term)
    elif r["kind"] == "exercise" and 20 <= len(text) <= MAX_EXERCISE_CHARS:
        yield "exercise", text
    elif r["kind"] == "para":
        section = (r["book"], r.get("section", ""))
        if section not in sections_seen:
            sections_seen.add(section)
            question = section_question(r, rng, common_words)
            if question:
                yield "section", question
        sentence = paragraph_sentence(text, rng)
        if sentence:
            yield "sentence", sentence


def balanced(candidates, total, rng):
    """At most `total` examples of one category: each kind up to its cap, sentences filling the rest."""
    by_kind = collections.defaultdict(list)
    for example in candidates:
        by_kind[example["kind"]].append(example)
    chosen = []
    for kind, cap in KIND_CAPS.items():
        pool = by_kind[kind]
        rng.shuffle(pool)
        chosen += pool[:min(cap, total)]
    pool = by_kind["sentence"]
    rng.shuffle(pool)
    chosen += pool[:max(0, total - len(chosen))]
    rng.shuffle(chosen)
    return chosen[:total]


def attribution(readme):
    """ATTRIBUTION.md from the corpus README's tables and attribution lines."""
    text = open(readme, encoding="utf-8").read()
    sections = re.split(r"^## ", text, flags=re.M)
    openstax = next(s for s in sections if s.startswith("1. OpenStax"))
    circuits = next(s for s in sections if s.startswith("3. Lessons"))
    supplement = next(s for s in sections if s.startswith("6. Supplement"))
    lines = ["# Textbooks the default models read", "",
             "Every default model was fine-tuned from an encoder whose masked-LM pretraining read these books, and "
             "the domain classifier learned from examples made from them (glossary terms and section titles as "
             "questions, exercises, sentences). No text of them is in this repository. Modified: text extracted, "
             "markup, code and equations removed, paragraphs cut into sentences and rows.", "",
             "## OpenStax (CC BY 4.0)", "",
             "OpenStax relicensed most books to CC BY-NC-SA 4.0 in 2026; the text these models read is each "
             "book's **CC BY 4.0 version**, at the commit named (the newest one under CC BY 4.0). Licence: "
             "`OpenStax.CC-BY-4.0.txt`. \"OpenStax\" and Rice University are trademarks; no endorsement is "
             "implied.", ""]
    for row in re.findall(r"^\| `[^`]+` \| (.+?) \(`[^`]+`\) \| [^|]+ \| `([^`]+)` @ `([0-9a-f]+)`[^|]*\| [^|]+ \| "
                          r"([0-9,]+) \|", openstax, flags=re.M):
        title, repo, commit, paragraphs = row
        if paragraphs != "0":
            lines.append(f"- Access for free at openstax.org. *{title}*, authors as listed on the book's "
                         f"openstax.org page. OpenStax, Rice University. Licensed under CC BY 4.0 "
                         f"(https://creativecommons.org/licenses/by/4.0/), the CC BY 4.0 version: "
                         f"`github.com/{repo}` at `{commit}`.")
    source = re.search(r"Source: `([^`]+)` @ `([0-9a-f]+)`", circuits)
    notice = re.search(r'^Attribution: "(.+)"$', circuits, flags=re.M)
    lines += ["", "## Lessons In Electric Circuits (CC BY 4.0)", "",
              f"- {notice[1]} Read at `github.com/{source[1]}` `{source[2]}` (the volumes' own CC BY 4.0 notice).",
              "", "## Computer science and logic (CC BY 4.0, 3.0, 2.5 Canada)", ""]
    block = supplement[supplement.index("**Attribution lines**"):supplement.index("**Processing.**")]
    for line in block.splitlines()[1:]:
        if line.startswith("Chapter authors"):
            lines.append("")
        if line.strip():
            lines.append(line)
    lines += ["", "Modified: text extracted; markup, code and equations removed. Licence texts beside this file: "
              + ", ".join(f"`{name}`" for name in LICENCE_FILES) + "."]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--corpus", default="../shared/data/corpus")
    parser.add_argument("--licences")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    records = list(read_corpus(args.corpus))
    held = held_out_parts(records)
    rng = random.Random(1)
    summary = {"held_out": held, "pretrain": {"rows": 0, "words": 0}, "domain": collections.Counter(),
               "held_out_examples": collections.Counter()}
    candidates = {"domain": collections.defaultdict(list), "held_out": collections.defaultdict(list)}
    sections_seen, common_words = set(), lower_case_words(records)
    with open(os.path.join(args.out, "pretrain.jsonl"), "w", encoding="utf-8") as pretrain:
        for r in records:
            held_out = is_held_out(r, held)
            for kind, text in examples(r, rng, sections_seen, common_words):
                source = f"corpus-held-out:{r['category']}" if held_out else "corpus-" + kind
                candidates["held_out" if held_out else "domain"][r["category"]].append(
                    {"text": text, "label": r["category"], "source": source, "book": r["book"], "kind": kind})
            if held_out:  # held out of the pretraining too: nothing of it is seen before the check
                continue
            for row in rows_of(r["text"]):
                pretrain.write(json.dumps({"text": row, "source": "corpus:" + r["book"]}) + "\n")
                summary["pretrain"]["rows"] += 1
                summary["pretrain"]["words"] += len(row.split())
    for name, total in (("domain", PER_CATEGORY), ("held_out", HELD_OUT_PER_CATEGORY)):
        with open(os.path.join(args.out, name + ".jsonl"), "w", encoding="utf-8") as out:
            for category, pool in sorted(candidates[name].items()):
                for example in balanced(pool, total, rng):
                    out.write(json.dumps(example) + "\n")
                    summary[name if name == "domain" else "held_out_examples"][f"{category}/{example['kind']}"] += 1
    notice = attribution(os.path.join(args.corpus, "README.md"))
    with open(os.path.join(args.out, "ATTRIBUTION.md"), "w", encoding="utf-8") as out:
        out.write(notice)
    if args.licences:
        os.makedirs(args.licences, exist_ok=True)
        with open(os.path.join(args.licences, "textbooks.md"), "w", encoding="utf-8") as out:
            out.write(notice)
        for name in LICENCE_FILES:
            shutil.copyfile(os.path.join(args.corpus, "..", "LICENSES", name), os.path.join(args.licences, name))
    print(json.dumps(summary, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
