#!/usr/bin/env python3
"""PII training sentences beyond presidio's templates, for the default PII model.

presidio's samples come from ~200 templates, and a model trained on them
learns the templates: on templates it never saw it finds a fraction of the
entities and cuts phone numbers into pieces. This writes sentences from the
project's own carrier phrases (below: chat requests, signatures, forms)
with values in many formats: names, places and organisations from WordNet
3.0's instances (Debian's wordnet-base; licence in models/LICENSES), and
phone numbers, e-mail addresses, card numbers, SSNs, IBANs, IP addresses,
dates and street addresses generated here. Offsets are UTF-8 byte offsets,
as `semroute train --task token` reads them. Seeded, so reproducible.

  scripts/pii-data.py OUT.jsonl [--rows 1500] [--wordnet /usr/share/wordnet]
"""
import argparse
import json
import os
import random
import re
import sys
from importlib import import_module
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
wordnet = import_module("wordnet-data")

# {TYPE} slots; types as the PII model names them (presidio's, with
# addresses as STREET_ADDRESS and locations as GPE).
CARRIERS = [
    "Hi, my name is {PERSON} and I live in {GPE}.",
    "You can reach me on {PHONE_NUMBER} after 5pm.",
    "Please send the contract to {EMAIL_ADDRESS} by Friday.",
    "My card {CREDIT_CARD} was charged twice, can you refund one payment?",
    "{PERSON} asked me to forward this to {EMAIL_ADDRESS}.",
    "Ship the order to {STREET_ADDRESS}, {GPE}.",
    "Thanks,\n{PERSON}\n{PHONE_NUMBER}",
    "Best regards, {PERSON} | {EMAIL_ADDRESS} | {PHONE_NUMBER}",
    "The meeting with {PERSON} from {ORGANIZATION} is on {DATE_TIME}.",
    "My social security number is {US_SSN}, is that enough to verify me?",
    "Transfer the deposit to IBAN {IBAN_CODE} before {DATE_TIME}.",
    "Our server at {IP_ADDRESS} keeps rejecting logins from {IP_ADDRESS}.",
    "Can you draft a reply to {PERSON}? Her number is {PHONE_NUMBER}.",
    "Name: {PERSON}\nEmail: {EMAIL_ADDRESS}\nPhone: {PHONE_NUMBER}",
    "Name: {PERSON}, born {DATE_TIME}, SSN {US_SSN}",
    "I moved from {GPE} to {STREET_ADDRESS} last month.",
    "Summarize this email from {PERSON} ({EMAIL_ADDRESS}) about the {ORGANIZATION} account.",
    "{PERSON} works at {ORGANIZATION} in {GPE}.",
    "Text {PHONE_NUMBER} if the delivery to {STREET_ADDRESS} is late.",
    "Why was my payment with card number {CREDIT_CARD} declined?",
    "Book a table for two under the name {PERSON}, phone {PHONE_NUMBER}.",
    "Is {EMAIL_ADDRESS} a valid address for the newsletter?",
    "Patient {PERSON}, admitted {DATE_TIME}, contact {PHONE_NUMBER}.",
    "Write a cover letter for {PERSON} applying to {ORGANIZATION}.",
    "Find flights from {GPE} to {GPE} for {PERSON} on {DATE_TIME}.",
    "Block the IP {IP_ADDRESS}, it belongs to {PERSON}'s old laptop.",
    "Update my billing address to {STREET_ADDRESS}.",
    "I'm {PERSON}; my account email is {EMAIL_ADDRESS} and my phone is {PHONE_NUMBER}.",
    "Refund {PERSON} to the card ending {CREDIT_CARD}.",
    "Remind {PERSON} to call {PERSON} at {PHONE_NUMBER} on {DATE_TIME}.",
    "Translate this for {PERSON}: the parcel goes to {STREET_ADDRESS}, {GPE}.",
    "My IBAN is {IBAN_CODE} and the account is in the name of {PERSON}.",
    "please call {PHONE_NUMBER} asap",
    "contact: {EMAIL_ADDRESS}",
    "{PERSON} ({PHONE_NUMBER}) will pick up the keys.",
    "Send the report to {PERSON} at {ORGANIZATION}, {STREET_ADDRESS}.",
    "The invoice for {ORGANIZATION} was paid on {DATE_TIME} with {CREDIT_CARD}.",
    "Can you check why {IP_ADDRESS} is on the blocklist?",
    "We met {PERSON} in {GPE} on {DATE_TIME}.",
    "Does {ORGANIZATION} still have an office in {GPE}?",
]
STREETS = ["Street", "Avenue", "Road", "Lane", "Drive", "Boulevard", "Court", "Way", "Place"]
TITLES = {"Queen", "King", "President", "Saint", "Sir", "Lord", "Pope", "General", "Prince", "Princess", "Emperor",
          "Czar", "Tsar", "Lady", "Captain", "Admiral", "Mother", "Father", "Brother", "Sister", "Uncle", "Aunt",
          "Chief", "Duke", "Baron", "Count", "Dame"}
ORGANISATION = re.compile(r"\b(company|corporation|university|bank|agency|airline|manufacturer|firm)\b")
DOMAINS = ["example.com", "mail.example.org", "example.net", "corp.example", "inbox.example.co.uk"]


def wordnet_names(root):
    """(first names, surnames, places, organisations) from WordNet's instances."""
    firsts, lasts, places, orgs = {}, set(), set(), set()
    for synset in wordnet.read_wordnet(root).values():
        if not any(symbol == "@i" for symbol, _ in synset["pointers"]):
            continue  # instances only: named things
        for word in map(wordnet.lemma, synset["words"]):
            parts = word.split(" ")
            if not all(p[:1].isupper() and p.replace("-", "").replace(".", "").isalpha() for p in parts):
                continue
            if synset["lexname"] == 18 and len(parts) == 2 and parts[0] not in TITLES:  # noun.person
                firsts[parts[0]] = firsts.get(parts[0], 0) + 1
                lasts.add(parts[1])
            elif synset["lexname"] == 15 and len(parts) <= 3:  # noun.location
                places.add(word)
            elif synset["lexname"] == 14 and 2 <= len(parts) <= 4 and ORGANISATION.search(synset["gloss"]):
                orgs.add(word)  # noun.group
    # A first name is one that at least two people share (not "Taoist").
    return sorted(w for w, k in firsts.items() if k >= 2), sorted(lasts), sorted(places), sorted(orgs)


def luhn_digits(rng, prefix, length=16):
    digits = [int(c) for c in prefix] + [rng.randrange(10) for _ in range(length - len(prefix) - 1)]
    total = 0
    for i, d in enumerate(reversed(digits)):  # the check digit will sit to the right
        d = d * 2 if i % 2 == 0 else d
        total += d - 9 if d > 9 else d
    return "".join(map(str, digits + [(10 - total % 10) % 10]))


def value(rng, kind, names):
    firsts, lasts, places, orgs = names
    n = lambda k: "".join(str(rng.randrange(10)) for _ in range(k))  # noqa: E731
    if kind == "PERSON":
        first, last = rng.choice(firsts), rng.choice(lasts)
        return rng.choice([f"{first} {last}", f"{first} {last}", first, f"{first} {last}".lower(),
                           f"{first} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {last}"])
    if kind == "GPE":
        return rng.choice(places)
    if kind == "ORGANIZATION":
        if orgs and rng.random() < 0.1:
            return rng.choice(orgs)
        return f"{rng.choice(lasts)} {rng.choice(['Ltd', 'Inc.', '& Sons', 'GmbH', 'Partners', 'Group', 'Labs'])}"
    if kind == "EMAIL_ADDRESS":
        first, last = rng.choice(firsts).lower(), rng.choice(lasts).lower()
        user = rng.choice([f"{first}.{last}", f"{first}{n(2)}", f"{first[0]}{last}", f"{last}_{first}"])
        return f"{user}@{rng.choice(DOMAINS)}"
    if kind == "PHONE_NUMBER":
        return rng.choice([f"{n(3)}-555-{n(4)}", f"({n(3)}) 555-{n(4)}", f"+1 {n(3)} 555 {n(4)}",
                           f"+44 20 {n(4)} {n(4)}", f"555.{n(3)}.{n(4)}", f"+49 30 {n(8)}", f"0{n(3)} {n(3)} {n(4)}",
                           f"+33 6 {n(2)} {n(2)} {n(2)} {n(2)}"])
    if kind == "CREDIT_CARD":
        digits = luhn_digits(rng, rng.choice(["4", "51", "55", "37", "6011"]))
        sep = rng.choice(["", " ", "-"])
        return sep.join(digits[i:i + 4] for i in range(0, 16, 4))
    if kind == "US_SSN":
        return f"{rng.randrange(100, 900)}-{n(2)}-{n(4)}"
    if kind == "IBAN_CODE":
        return rng.choice(["GB", "DE", "FR", "NL"]) + n(2) + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
                                                                  for _ in range(4)) + n(14)
    if kind == "IP_ADDRESS":
        return ".".join(str(rng.randrange(1, 255)) for _ in range(4))
    if kind == "DATE_TIME":
        month = rng.choice(["January", "February", "March", "April", "May", "June", "July", "August", "September",
                            "October", "November", "December"])
        return rng.choice([f"{month} {rng.randrange(1, 29)}, {rng.randrange(1950, 2030)}",
                           f"{rng.randrange(1950, 2030)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
                           f"{rng.randrange(1, 13):02d}/{rng.randrange(1, 29):02d}/{rng.randrange(1950, 2030)}",
                           f"{rng.randrange(1, 29)} {month} {rng.randrange(1950, 2030)}"])
    if kind == "STREET_ADDRESS":
        return f"{rng.randrange(1, 9999)} {rng.choice(lasts)} {rng.choice(STREETS)}"
    raise ValueError(kind)


def sentence(rng, carrier, names):
    text, spans = b"", []
    for literal, kind in re.findall(r"([^{]*)(?:\{([A-Z_]+)\})?", carrier):
        text += literal.encode()
        if kind:
            v = value(rng, kind, names).encode()
            spans.append({"start": len(text), "end": len(text) + len(v), "label": kind})
            text += v
    return {"text": text.decode(), "spans": spans, "source": "generated"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--rows", type=int, default=1500)
    parser.add_argument("--wordnet", default="/usr/share/wordnet")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.wordnet, "data.noun")):
        sys.exit(f"no WordNet in {args.wordnet}: apt-get install wordnet-base")
    names = wordnet_names(args.wordnet)
    rng = random.Random(5)
    with open(args.out, "w") as f:
        for i in range(args.rows):
            f.write(json.dumps(sentence(rng, CARRIERS[i % len(CARRIERS)], names)) + "\n")
    print(json.dumps({"rows": args.rows, "carriers": len(CARRIERS), "first_names": len(names[0]),
                      "surnames": len(names[1]), "places": len(names[2]), "organisations": len(names[3])}))


if __name__ == "__main__":
    main()
