#!/usr/bin/env python3
"""Training text from WordNet 3.0 (Debian's wordnet-base) for the default models.

The licensed sets in shared/data are ~25 000 texts: too few for a small
encoder to learn what most English words mean, and their domain questions are
exam items, not the short questions users ask. WordNet (Princeton licence:
use, copy, modify with its notice, models/LICENSES/WordNet.txt) adds both:

  glosses.jsonl    every synset's words, definition and examples, packed into
                   rows of about 400 characters: masked-LM pretraining text.
  questions.jsonl  short questions ("What is a tort?", "Who was Niels Bohr?",
                   "What is the term for the science of matter?") labelled
                   with one of the domain classifier's 14 categories, from
                   WordNet's topic-domain links ("tort" is in the domain of
                   law), hypernyms ("measles" is a disease: health) and
                   instance links ("Niels Bohr" is a physicist). Template and
                   synset picks are seeded, so the files are reproducible.
  requests.jsonl   everyday requests about the same terms, labelled benign,
                   worded as harmful requests often are ("Can you help me
                   understand …", "How can I …", "What's the best way to
                   …"): a jailbreak model must not learn those openings.
  instructions.jsonl  everyday text-processing instructions, labelled benign
                   ("Rewrite this sentence to be more concise: …", "Act as
                   an editor and …", "From now on, answer …") on WordNet's
                   example sentences and words: the commonest requests a
                   router sees, framed as jailbreak templates often are
                   (roles, standing orders, quoted input).

  scripts/wordnet-data.py OUT_DIR [--wordnet /usr/share/wordnet]
"""
import argparse
import json
import os
import random
import re
import sys

# Topic domains (by their first word) and hypernym anchors -> category. A
# synset takes the category of the nearest mapped topic or anchor, walking
# hypernyms upward; topics map through their own hypernyms too ("botany" is a
# branch of biology). Sports, music, cooking and the like are "other", as
# MMLU-Pro files trivia; religions are philosophy (MMLU's world_religions).
TOPICS = {
    "law": "law", "jurisprudence": "law", "criminal_law": "law", "civil_law": "law", "crime": "law",
    "chemistry": "chemistry", "biochemistry": "chemistry", "organic_chemistry": "chemistry",
    "computer_science": "computer science", "computer": "computer science", "programming": "computer science",
    "internet": "computer science",
    "biology": "biology", "genetics": "biology", "botany": "biology", "zoology": "biology", "ecology": "biology",
    "physiology": "biology", "microbiology": "biology", "cytology": "biology", "embryology": "biology",
    "physics": "physics", "astronomy": "physics", "optics": "physics", "electricity": "physics",
    "cosmology": "physics", "nuclear_physics": "physics", "thermodynamics": "physics", "mechanics": "physics",
    "mathematics": "math", "statistics": "math", "geometry": "math", "arithmetic": "math", "algebra": "math",
    "trigonometry": "math", "calculus": "math", "logic": "philosophy",
    "medicine": "health", "anatomy": "health", "pathology": "health", "surgery": "health", "dentistry": "health",
    "pharmacology": "health", "pharmacy": "health", "obstetrics": "health", "ophthalmology": "health",
    "psychiatry": "psychology", "psychology": "psychology", "psychoanalysis": "psychology",
    "economics": "economics", "finance": "economics", "banking": "economics", "tax": "economics",
    "commerce": "business", "commercial_enterprise": "business", "business": "business", "accounting": "business",
    "marketing": "business", "stock_exchange": "business", "management": "business", "advertising": "business",
    "philosophy": "philosophy", "ethics": "philosophy", "theology": "philosophy", "religion": "philosophy",
    "Christianity": "philosophy", "Judaism": "philosophy", "Islam": "philosophy", "Hinduism": "philosophy",
    "Buddhism": "philosophy", "Roman_Catholic": "philosophy", "Old_Testament": "philosophy",
    "New_Testament": "philosophy", "church_service": "philosophy",
    "engineering": "engineering", "electronics": "engineering", "architecture": "engineering",
    "telecommunication": "engineering", "electrical_engineering": "engineering", "mining": "engineering",
    "antiquity": "history", "Middle_Ages": "history", "history": "history", "archeology": "history",
    "sport": "other", "music": "other", "cooking": "other", "art": "other", "game": "other",
    "politics": "other", "government": "other", "military": "other", "geography": "other",
    "sociology": "other", "photography": "other", "literature": "other", "fine_arts": "other",
    "performing_arts": "other",
}
ANCHORS = {  # noun hypernyms that decide a category (lemma, gloss prefix)
    ("disease", "an impairment of health"): "health",
    ("medicine", "(medicine) something that treats"): "health",
    ("symptom", "(medicine) any sensation"): "health",
    ("medical_procedure", "a procedure employing"): "health",
    ("body_part", "any part of an organism"): "health",
    ("chemical_element", "any of the more than 100"): "chemistry",
    ("compound", "(chemistry) a substance formed"): "chemistry",
    ("acid", "any of various water-soluble compounds"): "chemistry",
    ("cell", "(biology) the basic structural"): "biology",
    ("gene", "(genetics) a segment of DNA"): "biology",
    ("organelle", "a specialized part of a cell"): "biology",
    ("mental_disorder", "(psychiatry) a psychological disorder"): "psychology",
    ("emotion", "any strong feeling"): "psychology",
    ("physical_phenomenon", "a natural phenomenon involving the physical"): "physics",
    ("elementary_particle", "(physics) a particle smaller than an atom"): "physics",
    ("celestial_body", "natural objects visible in the sky"): "physics",
    ("force", "(physics) the influence that produces"): "physics",
    ("number", "a concept of quantity"): "math",
    ("mathematical_relation", "a relation between mathematical"): "math",
    ("figure", "a combination of points and lines"): "math",
    ("program", "(computer science) a sequence of instructions"): "computer science",
    ("algorithm", "a precise rule (or set of rules)"): "computer science",
    ("crime", "(criminal law) an act punishable by law"): "law",
    ("legal_document", "(law) a document that states"): "law",
    ("currency", "the metal or paper medium of exchange"): "economics",
    ("tax", "charge against a citizen"): "economics",
    ("battle", "a hostile meeting of opposing military forces"): "history",
    ("war", "the waging of armed conflict"): "history",
    ("historic_period", "an era of history"): "history",
    ("dynasty", "a sequence of powerful leaders"): "history",
    ("philosophical_doctrine", "the doctrine of a particular"): "philosophy",
    ("machine", "any mechanical or electrical device"): "engineering",
    ("circuit", "an electrical device that provides"): "engineering",
}
PEOPLE = {  # instance-of classes: "Who was X?" -> category
    "philosopher": "philosophy", "chemist": "chemistry", "physicist": "physics", "astronomer": "physics",
    "mathematician": "math", "economist": "economics", "psychologist": "psychology", "psychiatrist": "psychology",
    "biologist": "biology", "naturalist": "biology", "geneticist": "biology", "physiologist": "biology",
    "President_of_the_United_States": "history", "general": "history", "statesman": "history",
    "emperor": "history", "pharaoh": "history", "king": "history", "queen": "history", "conqueror": "history",
    "revolutionary": "history", "jurist": "law", "lawyer": "law", "judge": "law",
    "computer_scientist": "computer science", "engineer": "engineering", "inventor": "engineering",
    "physician": "health", "surgeon": "health", "industrialist": "business", "businessman": "business",
    "financier": "business", "theologian": "philosophy",
}
CONCEPT_QUESTIONS = [
    "What is {a}?", "What does {w} mean?", "Explain {w}.", "Can you explain {w} in simple terms?",
    "Define {w}.", "Tell me about {w}.", "What is meant by {w}?", "Give me an example of {w}.",
    "How would you describe {w}?", "Why does {w} matter?", "what is {w}", "Quick question: what is {a}?",
]
GLOSS_QUESTIONS = ["What is the term for {g}?", "What do you call {g}?", "Which word means {g}?",
                   "What's the name for {g}?"]
PERSON_QUESTIONS = ["Who was {w}?", "What is {w} known for?", "Tell me about {w}.", "Why is {w} famous?",
                    "What did {w} do?"]
VERB_QUESTIONS = ["What does it mean to {w}?", "How do you {w}?", "What does '{w}' mean?"]
BENIGN_REQUESTS = [
    "Can you explain {w} to me?", "Can you help me understand {w}?", "Can you give me a summary of {w}?",
    "How can I learn more about {w}?", "How can I explain {w} to a child?", "How to remember what {w} is?",
    "Why is {w} important?", "What are the main ideas behind {w}?", "What's the best way to study {w}?",
    "Tell me a fun fact about {w}.", "Is it true that {w} is hard to understand?", "Do you know anything about {w}?",
    "Where can I read about {w}?", "I want to understand {w}. Where should I start?",
    "Can you write a short paragraph about {w}?", "Help me write a quiz question about {w}.",
]
# Everyday requests about animals, food, plants, places and household things
# (WordNet's lexicographer files), opening as harmful asks often do ("Tell me
# a joke about …", "Can you …", "How do I …"). {thing} is an artifact.
EVERYDAY_REQUESTS = {
    "animal": ["Tell me a joke about a {w}.", "Can you suggest a name for my {w}?", "Write a story for kids about a {w}.",
               "What does a {w} eat?", "How do I take care of a {w}?", "Write a short poem about a {w}."],
    "food": ["Can you give me a recipe with {w}?", "How do I cook {w}?", "What goes well with {w}?",
             "Translate 'I love {w}' into French.", "Is {w} healthy to eat every day?", "How should I store {w}?"],
    "plant": ["How do I grow {w} at home?", "How often should I water my {w}?", "Why are the leaves of my {w} turning yellow?",
              "Write a haiku about {w}."],
    "place": ["Can you help me plan a trip to {w}?", "What should I see in {w}?", "What's the best time of year to visit {w}?",
              "Give me a packing list for a weekend in {w}.", "Summarize the history of {w} in three sentences.",
              "How do people greet each other in {w}?"],
    "thing": ["How do I clean my {w}?", "How can I fix a broken {w}?", "Can you recommend a good {w} for a beginner?",
              "Explain how a {w} works to a child.", "Help me write a product description for a {w}.",
              "Rewrite this sentence to sound more polite: the {w} you sold me does not work.",
              "What's the best way to choose a {w}?", "Can you proofread my ad for a used {w}?"],
}
LEXNAMES = {"animal": 5, "food": 13, "plant": 20, "place": 15, "thing": 6}  # noun.animal, noun.food, ...
# Everyday "how can I" asks (hobbies and household things): harmful
# questions open that way far more often than the benign ones above
# (HarmfulQA, CatQA: ~1 060 "How can I …" against ~280 benign), and the
# jailbreak model learned the opening.
HOWTO_REQUESTS = {
    "activity": ["How can I get better at {w}?", "How can I find more time for {w}?", "How do I get started with {w}?",
                 "How to get into {w} as an adult?", "What's the best way to learn {w}?",
                 "How can I make {w} more fun for my kids?", "How can I stop putting off {w}?",
                 "How do I stay motivated with {w}?", "How can I practice {w} at home?"],
    "thing": ["How can I make my {w} last longer?", "How do I set up a new {w}?", "How can I save money on a {w}?",
              "How to choose the right {w}?", "How can I get my {w} to work again?",
              "What's the easiest way to clean a {w}?", "How can I keep my {w} from breaking?"],
}
HOWTO_LEXNAMES = {"activity": 4, "thing": 6}  # noun.act (words ending in -ing), noun.artifact
# Activities that are harm in themselves ("stabbing", "shooting") stay out too.
HARMFUL_ACTIVITY = re.compile(r"\b(?:knife|gun|firearm|projectile|steal|theft|attack|violen|assault|fight|fraud|crim|"
                              r"wound|injur|death|hurt|force|strik|hit\b|cheat|decei|hunt|cock|blow|punish|gambl|cruel|abus|torture|"
                              r"kidnap|smuggl|poach|bully|drink|intox|sex|kill|loot|racket|spank|bullfight|chok|spy|bloodlet|beat|bait|"
                              r"dump|brainwash|whip|ransack|ravag|launder|censor|seiz|belittl|raz|heckl|meddl|fib|badger|wrong|suck)", re.IGNORECASE)
# Terms whose definition touches harm stay out of the benign requests.
# At a word's start: "kills", "killer", not "skill".
HARMFUL_GLOSS = re.compile(r"\b(?:poison|toxic|explosive|weapon|narcotic|lethal|kill|illegal|nerve agent|bomb|"
                           r"murder|sexual|drug of abuse|addict)", re.IGNORECASE)
ADJ_QUESTIONS = ["What does '{w}' mean?", "What is meant by '{w}'?"]
# Everyday instructions on a WordNet example sentence {s}, a word {w} and its
# definition {d}.
INSTRUCTIONS = [
    "Rewrite this sentence to be more concise: {s}", "Rewrite the following sentence in a more formal tone.\n{s}",
    "Correct the grammar and spelling in this sentence: {s}", "Translate this sentence into Spanish: \"{s}\"",
    "Paraphrase the following sentence: {s}", "Summarize this definition in five words or fewer: {d}",
    "Classify the sentiment of this sentence as positive, negative or neutral.\nSentence: {s}",
    "Give me three synonyms for the word '{w}'.", "Write a sentence using the word '{w}'.",
    "Turn this definition into a multiple-choice quiz question: {w}: {d}",
    "Is this sentence in the past, present or future tense? {s}",
    "Output 'yes' if the sentence mentions a person, otherwise 'no'.\nSentence: {s}",
    "You are a helpful editor. Improve the flow of this sentence without changing its meaning: {s}",
    "Act as a teacher and explain the word '{w}' to a ten-year-old.",
    "From now on, answer every question I ask with a short rhyme. First question: what does '{w}' mean?",
    "Write a friendly reply to this message: \"{s}\"", "Pretend you are a dictionary and define '{w}'.",
    "Continue this text with one more sentence: {s}", "Make this sentence sound more exciting: {s}",
    "Write a tweet that includes the word '{w}' and a hashtag.",
]


def read_wordnet(root):
    synsets = {}
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(root, "data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):  # the licence header
                    continue
                head, _, gloss = line.partition(" | ")
                fields = head.split()
                count = int(fields[3], 16)
                words = [fields[4 + 2 * i] for i in range(count)]
                at = 4 + 2 * count
                pointers = []
                for _ in range(int(fields[at])):
                    target_pos = "a" if fields[at + 3] == "s" else fields[at + 3]  # satellites live in data.adj
                    pointers.append((fields[at + 1], fields[at + 2] + target_pos))
                    at += 4
                synsets[fields[0] + pos[0]] = {"words": words, "pos": fields[2], "lexname": int(fields[1]),
                                               "pointers": pointers, "gloss": gloss.strip()}
    return synsets


def lemma(word):
    return re.sub(r"\(.*\)$", "", word).replace("_", " ")


def split_gloss(gloss):
    """('definition', ['example', ...]) from 'definition; "example"; "example"'."""
    examples = re.findall(r'"([^"]+)"', gloss)
    definition = re.sub(r';?\s*"[^"]*"', "", gloss).strip(" ;")
    return definition, examples


def targets(synset, symbols):
    return [t for s, t in synset["pointers"] if s in symbols]


def categorize(synsets):
    """Synset id -> category, from topics, anchors and instance classes."""
    def named(key, table):
        s = synsets[key]
        return next((table[w] for w in s["words"] if w in table), None)

    anchor_ids = {}
    for key, s in synsets.items():
        if s["pos"] != "n":
            continue
        for (word, prefix), category in ANCHORS.items():
            if word in s["words"] and s["gloss"].startswith(prefix):
                anchor_ids[key] = category

    memo = {}

    def upward(key, depth=0):  # nearest mapped topic or anchor along hypernyms
        if key in memo:
            return memo[key]
        memo[key] = None
        found = anchor_ids.get(key) or named(key, TOPICS)
        if found is None and depth < 20:
            for parent in targets(synsets[key], ("@", "@i")):
                found = upward(parent, depth + 1)
                if found:
                    break
        memo[key] = found
        return found

    categories = {}
    for key, s in synsets.items():
        topic = next((upward(t) for t in targets(s, (";c",)) if upward(t)), None)
        person = None
        for cls in targets(s, ("@i",)):
            person = named(cls, PEOPLE) or person
        category = topic or person or (upward(key) if s["pos"] == "n" else None)
        if category:
            categories[key] = (category, "person" if person and not topic else "concept")
    return categories


def question(rng, synset, kind):
    word = lemma(rng.choice(synset["words"][:2]))
    definition, _ = split_gloss(synset["gloss"])
    if kind == "person":
        return rng.choice(PERSON_QUESTIONS).format(w=word)
    if synset["pos"] == "v":
        return rng.choice(VERB_QUESTIONS).format(w=word)
    if synset["pos"] in "as":
        return rng.choice(ADJ_QUESTIONS).format(w=word)
    if definition and 15 <= len(definition) <= 120 and rng.random() < 0.3:
        return rng.choice(GLOSS_QUESTIONS).format(g=re.sub(r"^\([^)]*\)\s*", "", definition))
    article = word if word[:1].isupper() else ("an " if word[0] in "aeiou" else "a ") + word
    return rng.choice(CONCEPT_QUESTIONS).format(w=word, a=article)


def everyday(out, synsets, rng, count):
    """`count` everyday requests, labelled benign, spread over EVERYDAY_REQUESTS."""
    words = {kind: sorted({lemma(s["words"][0]) for s in synsets.values()
                           if s["pos"] == "n" and s["lexname"] == lexname and not HARMFUL_GLOSS.search(s["gloss"])
                           and (kind != "place" or any(p == "@i" for p, _ in s["pointers"]))
                           and (kind == "place" or s["words"][0].islower())})
             for kind, lexname in LEXNAMES.items()}
    kinds = sorted(EVERYDAY_REQUESTS)
    for i in range(count):
        kind = kinds[i % len(kinds)]
        text = rng.choice(EVERYDAY_REQUESTS[kind]).format(w=rng.choice(words[kind]))
        out.write(json.dumps({"text": text, "label": "benign", "source": "wordnet", "id": f"wordnet-everyday-{i}"}) + "\n")


def write_howto(path, synsets, count):
    """`count` everyday "how can I" requests, labelled benign, half about activities, half about things."""
    rng = random.Random(23)
    words = {kind: sorted({lemma(s["words"][0]) for s in synsets.values()
                           if s["pos"] == "n" and s["lexname"] == lexname and s["words"][0].isalpha()
                           and s["words"][0].islower() and not HARMFUL_GLOSS.search(s["gloss"])
                           and not HARMFUL_ACTIVITY.search(s["gloss"] + " " + s["words"][0])
                           and (kind != "activity" or s["words"][0].endswith("ing"))})
             for kind, lexname in HOWTO_LEXNAMES.items()}
    kinds = sorted(HOWTO_REQUESTS)
    with open(path, "w") as f:
        for i in range(count):
            kind = kinds[i % len(kinds)]
            text = rng.choice(HOWTO_REQUESTS[kind]).format(w=rng.choice(words[kind]))
            f.write(json.dumps({"text": text, "label": "benign", "source": "wordnet-howto",
                                "id": f"wordnet-howto-{i}"}) + "\n")
    return count


def write_glosses(path, synsets):
    """Every synset's words, definition and examples, packed into rows of ~400 characters."""
    with open(path, "w") as f:
        row, rows = [], 0
        for key in sorted(synsets):
            s = synsets[key]
            definition, examples = split_gloss(s["gloss"])
            row.append(", ".join(lemma(w) for w in s["words"]) + ": " + definition + ". " + " ".join(examples))
            if sum(map(len, row)) >= 400:
                f.write(json.dumps({"text": "\n".join(row), "source": "wordnet-gloss"}) + "\n")
                row, rows = [], rows + 1
        if row:
            f.write(json.dumps({"text": "\n".join(row), "source": "wordnet-gloss"}) + "\n")
    return rows


def write_questions(path, synsets, categories, per_category):
    """At most `per_category` distinct questions per category; their counts."""
    rng = random.Random(7)
    by_category = {}
    for key, (category, kind) in categories:
        by_category.setdefault(category, []).append((key, kind))
    counts = {}
    with open(path, "w") as f:
        for category in sorted(by_category):
            picks = by_category[category]
            rng.shuffle(picks)
            seen = set()
            for key, kind in picks:
                if len(seen) >= per_category:
                    break
                text = question(rng, synsets[key], kind)
                if text.lower() in seen:
                    continue
                seen.add(text.lower())
                f.write(json.dumps({"text": text, "label": category, "source": "wordnet",
                                    "id": "wordnet-" + key}) + "\n")
            counts[category] = len(seen)
    return counts


def write_instructions(path, synsets, count):
    """`count` everyday instructions, labelled benign, on harmless words and examples."""
    rows = []
    for key in sorted(synsets):
        s = synsets[key]
        if HARMFUL_GLOSS.search(s["gloss"]) or not s["words"][0].islower():
            continue
        definition, examples = split_gloss(s["gloss"])
        for example in examples:
            if len(example.split()) >= 5:
                end = "" if example[-1] in ".?!" else "."
                rows.append((lemma(s["words"][0]), definition, example[0].upper() + example[1:] + end))
    rng = random.Random(19)
    with open(path, "w") as f:
        for i, (word, definition, example) in enumerate(rng.sample(rows, min(count, len(rows)))):
            text = INSTRUCTIONS[i % len(INSTRUCTIONS)].format(s=example, w=word, d=definition)
            f.write(json.dumps({"text": text, "label": "benign", "source": "wordnet-instructions",
                                "id": f"wordnet-instruction-{i}"}) + "\n")
    return min(count, len(rows))


def write_requests(path, synsets, categories, count):
    """`count` requests about domain terms and `count` everyday ones, all benign; how many in all."""
    rng = random.Random(11)
    terms = [key for key, (category, kind) in categories
             if category not in ("law", "other") and synsets[key]["pos"] == "n" and kind == "concept"
             and not HARMFUL_GLOSS.search(synsets[key]["gloss"])]
    picked = rng.sample(terms, min(count, len(terms)))
    with open(path, "w") as f:
        for key in picked:
            text = rng.choice(BENIGN_REQUESTS).format(w=lemma(synsets[key]["words"][0]))
            f.write(json.dumps({"text": text, "label": "benign", "source": "wordnet",
                                "id": "wordnet-request-" + key}) + "\n")
        everyday(f, synsets, random.Random(13), count)
    return len(picked) + count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--wordnet", default="/usr/share/wordnet")
    parser.add_argument("--per-category", type=int, default=900, help="most questions per category")
    parser.add_argument("--requests", type=int, default=1500, help="benign requests of each kind (domain terms, everyday)")
    parser.add_argument("--instructions", type=int, default=1500, help="everyday instructions")
    parser.add_argument("--howto", type=int, default=1000, help='everyday "how can I" requests')
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.wordnet, "data.noun")):
        sys.exit(f"no WordNet in {args.wordnet}: apt-get install wordnet-base")
    synsets = read_wordnet(args.wordnet)
    os.makedirs(args.out, exist_ok=True)

    categories = sorted(categorize(synsets).items())  # (synset id, (category, kind)), in id order
    rows = write_glosses(os.path.join(args.out, "glosses.jsonl"), synsets)
    counts = write_questions(os.path.join(args.out, "questions.jsonl"), synsets, categories, args.per_category)
    requests = write_requests(os.path.join(args.out, "requests.jsonl"), synsets, categories, args.requests)
    instructions = write_instructions(os.path.join(args.out, "instructions.jsonl"), synsets, args.instructions)
    howto = write_howto(os.path.join(args.out, "howto.jsonl"), synsets, args.howto)
    print(json.dumps({"gloss_rows": rows, "questions": counts, "requests": requests, "instructions": instructions,
                      "howto": howto}))


if __name__ == "__main__":
    main()
