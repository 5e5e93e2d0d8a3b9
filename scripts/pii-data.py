#!/usr/bin/env python3
"""PII training sentences beyond presidio's templates, for the default PII model.

presidio's samples come from ~200 templates, and a model trained on them
learns the templates: on templates it never saw it takes rare words for
names, persons for places and organisations, and cuts phone numbers into
pieces. This writes sentences from the project's own carrier phrases
(below: requests, signatures and forms, news and story sentences, reviews,
lists of names, logs, lower-case chat) with values in many formats:
- names, towns, countries, streets, postcodes, companies, job titles and
  phone numbers from Faker (Debian's python3-fake-factory, MIT; licence in
  models/LICENSES) in 18 locales, people and places named in WordNet 3.0
  (Debian's wordnet-base), and organisation names coined from WordNet's
  concrete nouns ("Moorfowl Health");
- e-mail addresses (people's and role accounts such as support@), card
  numbers, SSNs, IBANs, IP addresses, dates and clock times, ages, driver's
  licences and web addresses generated here;
and, as text that holds no entity, WordNet's lower-case usage examples: a
quarter of the sentences carry one beside them, and --plain-rows more stand
alone. Offsets are UTF-8 byte offsets, as `semroute train --task token`
reads them. Seeded, so reproducible.

  scripts/pii-data.py OUT.jsonl [--rows 4000] [--plain-rows 800] [--wordnet /usr/share/wordnet]
"""
import argparse
import json
import os
import random
import re
import sys
import unicodedata
from importlib import import_module
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
wordnet = import_module("wordnet-data")

# {TYPE} slots; types as the PII model names them (presidio's, with
# addresses as STREET_ADDRESS and locations as GPE); {ADDRESS} is a whole
# postal address (street, town, code, country), labelled STREET_ADDRESS.
# Written to vary what surrounds a value: requests, signatures and forms,
# news and story sentences, reviews, lists, logs, lower-case chat.
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
    # news and story sentences
    "{PERSON}, a {AGE}-year-old {TITLE} from {GPE}, joined the board of {ORGANIZATION}.",
    "According to {PERSON}, the merger of {ORGANIZATION} and {ORGANIZATION} closes in {DATE_TIME}.",
    "Born in {GPE} on {DATE_TIME}, {PERSON} moved to {GPE} as a teenager.",
    "The {NRP} delegation, led by {PERSON}, arrived in {GPE} on {DATE_TIME}.",
    "Our guest tonight is {PERSON}, who worked as a {TITLE} for twenty years.",
    "{PERSON} and {PERSON} wrote the first version of the compiler over one summer.",
    "The prize went to {PERSON} of {ORGANIZATION} for her work on soil erosion.",
    "Police in {GPE} say {PERSON}, {AGE}, was last seen near {STREET_ADDRESS}.",
    "{ORGANIZATION} hired {PERSON} as its new {TITLE} on {DATE_TIME}.",
    "After the flood, {PERSON} rebuilt the bakery on {STREET_ADDRESS} almost alone.",
    "Historians still argue whether {PERSON} ever visited {GPE}.",
    "The letter, signed by {PERSON} and dated {DATE_TIME}, was found in an attic in {GPE}.",
    "When {PERSON} retired, {PERSON} took over the orchard.",
    "{PERSON} grew up speaking {NRP} at home and English at school.",
    "Last winter {PERSON} and I drove from {GPE} to {GPE} without a map.",
    "Every Sunday {PERSON} plays chess with {PERSON} at the library.",
    "The research group of {PERSON} at {ORGANIZATION} published three papers on enzyme kinetics.",
    "I was interviewed by {PREFIX} {PERSON}, the {TITLE}, and {PERSON}, who runs the lab.",
    "Witnesses: {PERSON}, {PERSON} and {PERSON}.",
    "Present at the meeting were {PERSON}, {PERSON}, {PERSON} and {PERSON}.",
    "The committee ({PERSON}, {PERSON}, {PERSON}) meets on {DATE_TIME}.",
    "Ask {PERSON} or {PERSON} about the rota.",
    "Shortlisted: {PERSON}; {PERSON}; {PERSON}.",
    # reviews and opinions, with plain words that are not names
    "The soprano was wonderful, but {PERSON}'s staging felt static and oddly melancholic.",
    "I bought this kettle after {PERSON} recommended it; the lid broke within a week.",
    "{PERSON} is a gifted cellist, yet the arrangement buries her under synthesizers.",
    "A slow, lyrical film about grief; {PERSON} plays the widowed lighthouse keeper.",
    "Honestly the risotto at the place {PERSON} picked in {GPE} was the best I have had.",
    "I think {PERSON} is right about the zoning plan, but {PERSON} makes a fair point too.",
    "The essay by {PERSON} argues that irrigation, not conquest, shaped the region.",
    # requests
    "Can you write a birthday message for {PERSON}, who turns {AGE} on {DATE_TIME}?",
    "Help me plan a week in {GPE} with my friend {PERSON}.",
    "I'm a {TITLE} at {ORGANIZATION} and need help with a slide deck on quarterly sales.",
    "My driver's license number is {US_DRIVER_LICENSE}; when does it expire?",
    "Is {DOMAIN_NAME} a safe site to buy from?",
    "Our new website {DOMAIN_NAME} went live on {DATE_TIME}.",
    "I am {AGE} years old and live in {GPE}; which pension plan suits me?",
    "{PREFIX} {PERSON}, your appointment is confirmed for {DATE_TIME}.",
    "As a {NRP} citizen living in {GPE}, do I need a visa for {GPE}?",
    "Please correct the grammar in this note to {PERSON}: i will be late tomorow.",
    "Draft a polite complaint to {ORGANIZATION} about order 88213 sent to {ADDRESS}",
    "Write a toast for the wedding of {PERSON} and {PERSON}.",
    "What should I tell {PERSON} about the delayed shipment to {GPE}?",
    "Could you check whether the postcode {ZIP_CODE} belongs to {GPE}?",
    "Change the delivery address on my account to:\n{ADDRESS}",
    # forms, records, signatures
    "DOB: {DATE_TIME}\nAge: {AGE}\nZIP: {ZIP_CODE}",
    "Employee: {PERSON}\nPosition: {TITLE}\nOffice: {STREET_ADDRESS}",
    "To: {EMAIL_ADDRESS}\nCc: {EMAIL_ADDRESS}\nSubject: lunch with {PERSON}",
    "License no. {US_DRIVER_LICENSE}, issued {DATE_TIME}, holder {PERSON}.",
    "Mailing address:\n{ADDRESS}",
    "{PREFIX} {PERSON}\n{TITLE}, {ORGANIZATION}\n{PHONE_NUMBER}",
    "Account holder: {PERSON} | IBAN: {IBAN_CODE} | since {DATE_TIME}",
    "Next of kin: {PERSON} ({AGE}), {ADDRESS}",
    "Nationality: {NRP}. Place of birth: {GPE}. Date of birth: {DATE_TIME}.",
    "Ref. 4471/B, applicant {PERSON}, tel. {PHONE_NUMBER}, web {DOMAIN_NAME}",
    "Sent from {EMAIL_ADDRESS} on {DATE_TIME}",
    "{PERSON}, {TITLE}\n{ORGANIZATION}\n{ADDRESS}",
    # logs and technical text
    "Failed login for user {PERSON} from {IP_ADDRESS} at {DATE_TIME}",
    "ssh to {IP_ADDRESS} works, but {IP_ADDRESS} times out since the upgrade",
    "The webhook posts to {DOMAIN_NAME} and retries three times with exponential backoff.",
    "Ticket opened by {PERSON} ({EMAIL_ADDRESS}): the export job fails with a timeout.",
    # informal, lower case
    "hey its {PERSON} again, new number is {PHONE_NUMBER}",
    "omg {PERSON} just landed in {GPE}!!",
    "can u send the pics to {EMAIL_ADDRESS} thx",
    "tell {PERSON} i said hi and that the party moved to {STREET_ADDRESS}",
    "lol {PERSON} and {PERSON} got lost in {GPE} again",
]
STREETS = ["Street", "Avenue", "Road", "Lane", "Drive", "Boulevard", "Court", "Way", "Place"]
TITLES = {"Queen", "King", "President", "Saint", "Sir", "Lord", "Pope", "General", "Prince", "Princess", "Emperor",
          "Czar", "Tsar", "Lady", "Captain", "Admiral", "Mother", "Father", "Brother", "Sister", "Uncle", "Aunt",
          "Chief", "Duke", "Baron", "Count", "Dame"}
ORGANISATION = re.compile(r"\b(company|corporation|university|bank|agency|airline|manufacturer|firm)\b")
DOMAINS = ["example.com", "mail.example.org", "example.net", "corp.example", "inbox.example.co.uk"]
# Faker's locales whose names, towns, streets and phone numbers are written
# in Latin script (presidio's samples mix many such countries); en_US is
# listed three times, so drawn three times as often.
LOCALES = ["en_US", "en_US", "en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "sv_SE", "fi_FI",
           "hu_HU", "pl_PL", "cs_CZ", "pt_BR", "no_NO", "dk_DK", "hr_HR", "sl_SI", "et_EE"]
# Nationalities, religions and political groups (presidio's NRP).
NRP = ["English", "French", "German", "Italian", "Spanish", "Portuguese", "Dutch", "Swedish", "Norwegian", "Danish",
       "Finnish", "Icelandic", "Polish", "Czech", "Slovenian", "Croatian", "Hungarian", "Greek", "Turkish", "Russian",
       "Ukrainian", "Chinese", "Japanese", "Korean", "Vietnamese", "Cambodian", "Thai", "Indian", "Pakistani",
       "Nigerian", "Kenyan", "Egyptian", "Moroccan", "Brazilian", "Mexican", "Argentinian", "Peruvian", "Canadian",
       "American", "Australian", "Catholic", "Protestant", "Muslim", "Jewish", "Hindu", "Buddhist", "Sikh",
       "Democrat", "Republican", "Socialist", "Conservative"]
PREFIXES = ["Mr.", "Mrs.", "Ms.", "Miss", "Dr.", "Prof.", "Mr", "Mrs", "Dr"]
ORGANISATION_KINDS = ["", "", "", " Inc.", " Corporation", " Incorporated", " Labs", " Analytics", " Foods", " Systems",
                      " Capital", " Health", " Media", " Logistics", " Holdings", " Software", " Foundation"]
ROLE_ACCOUNTS = ["support", "info", "sales", "billing", "admin", "contact", "hello", "accounts", "hr", "office",
                 "team", "help", "orders", "press"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def import_faker():
    """Faker (Debian's python3-fake-factory), also from a Python other than Debian's own."""
    try:
        return import_module("faker")
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")
        try:
            return import_module("faker")
        except ImportError:
            sys.exit("no Faker: apt-get install python3-fake-factory")


def wordnet_names(synsets):
    """(first names, surnames, places, organisations) from WordNet's instances."""
    firsts, lasts, places, orgs = {}, set(), set(), set()
    for synset in synsets.values():
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


def brand_words(synsets):
    """Short concrete nouns (animals, plants, things, substances) to coin organisation names from."""
    words = set()
    for synset in synsets.values():
        if synset["pos"] == "n" and synset["lexname"] in (5, 6, 13, 17, 20, 27):
            words.update(w for w in synset["words"] if w.isalpha() and w.islower() and 4 <= len(w) <= 8)
    return sorted(words)


def plain_examples(synsets):
    """WordNet's usage examples with no capital letter or digit: text with no entity in it."""
    rows = set()
    for synset in synsets.values():
        for example in wordnet.split_gloss(synset["gloss"])[1]:
            if len(example.split()) >= 5 and example == example.lower() and not re.search(r"[0-9]", example):
                rows.add(example[0].upper() + example[1:] + ("" if example[-1] in ".?!" else "."))
    return sorted(rows)


def luhn_digits(rng, prefix, length=16):
    digits = [int(c) for c in prefix] + [rng.randrange(10) for _ in range(length - len(prefix) - 1)]
    total = 0
    for i, d in enumerate(reversed(digits)):  # the check digit will sit to the right
        d = d * 2 if i % 2 == 0 else d
        total += d - 9 if d > 9 else d
    return "".join(map(str, digits + [(10 - total % 10) % 10]))


def ascii_fold(text):
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().replace(" ", "").replace("'", "")


class Values:
    """A value of each PII type: Faker's names, towns, streets, companies, jobs and phone numbers in many locales,
    WordNet's named people and places, and numbers in the formats people write them."""

    def __init__(self, rng, names, brand_words, faker):
        self.rng, self.names, self.brand_words = rng, names, brand_words
        self.fakers = {}
        for locale in sorted(set(LOCALES)):
            self.fakers[locale] = faker.Faker(locale)
            self.fakers[locale].seed_instance(rng.randrange(1 << 30))
        en_us = self.fakers["en_US"]
        self.generators = {
            "PERSON": self.person, "GPE": self.place, "ORGANIZATION": self.organization, "EMAIL_ADDRESS": self.email,
            "PHONE_NUMBER": self.phone, "DATE_TIME": self.date_time, "ADDRESS": self.address,
            "STREET_ADDRESS": self.street_address, "CREDIT_CARD": self.credit_card, "IBAN_CODE": self.iban,
            "IP_ADDRESS": self.ip_address, "DOMAIN_NAME": self.web_address, "US_DRIVER_LICENSE": self.driver_licence,
            "TITLE": en_us.job, "ZIP_CODE": lambda: self.fake("postcode"), "AGE": lambda: str(rng.randrange(1, 100)),
            "PREFIX": lambda: rng.choice(PREFIXES), "NRP": lambda: rng.choice(NRP),
            "US_SSN": lambda: f"{rng.randrange(100, 900)}-{self.digits(2)}-{self.digits(4)}"}

    def fake(self, method):
        """Faker's METHOD in a random locale (en_US where that locale lacks it)."""
        f = self.fakers[self.rng.choice(LOCALES)]
        return getattr(f, method)() if hasattr(f, method) else getattr(self.fakers["en_US"], method)()

    def digits(self, k):
        return "".join(str(self.rng.randrange(10)) for _ in range(k))

    def person(self):
        rng, (firsts, lasts, _, _) = self.rng, self.names
        if rng.random() < 0.2:
            first, last = rng.choice(firsts), rng.choice(lasts)
        else:
            f = self.fakers[rng.choice(LOCALES)]
            first, last = f.first_name(), f.last_name()
        full = f"{first} {last}"
        return rng.choice([full, full, full, first, first, last, full.lower(), full.upper(),
                           f"{first} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {last}"])

    def place(self):
        rng, places = self.rng, self.names[2]
        kind = rng.random()
        place = (rng.choice(places) if kind < 0.3 else self.fake("city") if kind < 0.7 else
                 self.fakers["en_US"].state() if kind < 0.8 else self.fake("country"))
        return place.lower() if rng.random() < 0.1 else place

    def organization(self):
        rng, (_, lasts, _, orgs), words = self.rng, self.names, self.brand_words
        kind = rng.random()
        if kind < 0.4:
            return self.fake("company")
        if kind < 0.45 and orgs:
            return rng.choice(orgs)
        if kind < 0.6:
            return f"{rng.choice(lasts)} {rng.choice(['Ltd', 'Inc.', '& Sons', 'GmbH', 'Partners', 'Group', 'Labs'])}"
        # A coined name, as brands are: one or two words, fused or not, and a kind of business.
        name = rng.choice(words).capitalize()
        if rng.random() < 0.5:
            name += rng.choice(["", " "]) + (rng.choice(words) if rng.random() < 0.8 else rng.choice(words).capitalize())
        return name + rng.choice(ORGANISATION_KINDS)

    def email(self):
        rng, lasts = self.rng, self.names[1]
        f = self.fakers[rng.choice(LOCALES)]
        first, last = ascii_fold(f.first_name()).lower(), ascii_fold(f.last_name()).lower()
        user = rng.choice([f"{first}.{last}", f"{first}{self.digits(2)}", f"{first[:1]}{last}", f"{last}_{first}",
                           f"{first.capitalize()}{last.capitalize()}", rng.choice(ROLE_ACCOUNTS)])
        domain = rng.choice(DOMAINS + [f"{ascii_fold(rng.choice(lasts)).lower()}.{rng.choice(['com', 'de', 'io'])}"])
        return f"{user}@{domain}"

    def phone(self):
        n = self.digits
        return self.rng.choice([f"{n(3)}-555-{n(4)}", f"({n(3)}) 555-{n(4)}", f"+1 {n(3)} 555 {n(4)}",
                                f"+44 20 {n(4)} {n(4)}", f"555.{n(3)}.{n(4)}", f"+49 30 {n(8)}", f"0{n(3)} {n(3)} {n(4)}",
                                f"+33 6 {n(2)} {n(2)} {n(2)} {n(2)}", self.fake("phone_number"),
                                self.fake("phone_number")])

    def date_time(self):
        rng, month = self.rng, self.rng.choice(MONTHS)
        year, m, d = rng.randrange(1930, 2030), rng.randrange(1, 13), rng.randrange(1, 29)
        moment = self.fakers["en_US"].date_time()
        hour, minute = rng.randrange(1, 13), rng.choice(["00", "15", "30", "45"])
        clock = rng.choice([f"{hour}pm", f"{hour} am", f"{hour}:{minute} pm", f"{hour}:{minute}am", f"{hour} p.m.",
                            f"{rng.randrange(0, 24):02d}:{minute}"])
        return rng.choice([f"{month} {d}, {year}", f"{year}-{m:02d}-{d:02d}", f"{m:02d}/{d:02d}/{year}",
                           f"{d} {month} {year}", f"{m}/{d}/{year}", str(moment), moment.strftime("%d.%m.%Y %H:%M"),
                           f"{month} {year}", f"{month} {d}", str(year), clock, clock,
                           f"{rng.choice(WEEKDAYS)} at {clock}", f"{month} {d} at {clock}"])

    def address(self):
        """A whole postal address: street, town and code, sometimes on separate lines and with a country."""
        rng, f = self.rng, self.fakers[self.rng.choice(LOCALES)]
        if f is self.fakers["en_US"] and rng.random() < 0.5:
            return f.address()
        sep = rng.choice([", ", "\n"])
        text = f"{f.street_address()}{sep}{f.postcode()} {f.city()}"
        return text + f"{sep}{self.fakers['en_US'].country()}" if rng.random() < 0.4 else text

    def street_address(self):
        rng = self.rng
        if rng.random() < 0.7:
            return self.fake("street_address")
        return f"{rng.randrange(1, 9999)} {rng.choice(self.names[1])} {rng.choice(STREETS)}"

    def credit_card(self):
        digits = luhn_digits(self.rng, self.rng.choice(["4", "51", "55", "37", "6011"]))
        return self.rng.choice(["", "", " ", "-"]).join(digits[i:i + 4] for i in range(0, 16, 4))

    def iban(self):
        rng, n = self.rng, self.digits
        return rng.choice(["GB", "DE", "FR", "NL"]) + n(2) + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
                                                                  for _ in range(4)) + n(14)

    def ip_address(self):
        rng = self.rng
        return self.fakers["en_US"].ipv6() if rng.random() < 0.2 else ".".join(str(rng.randrange(1, 255)) for _ in range(4))

    def web_address(self):
        rng = self.rng
        name = ascii_fold(rng.choice(self.names[1])).lower() + rng.choice(["", "shop", "travel", "news", "labs"])
        tld = rng.choice(["com", "org", "net", "de", "co.uk", "fr", "io"])
        return rng.choice([f"http://www.{name}.{tld}/", f"https://{name}.{tld}", f"www.{name}.{tld}", f"{name}.{tld}"])

    def driver_licence(self):
        n = self.digits
        return self.rng.choice([n(9), self.rng.choice("ABCDEFGHJKLMNPRSTW") + n(8), f"{n(3)}-{n(3)}-{n(3)}"])

    def __call__(self, kind):
        if kind not in self.generators:
            raise ValueError(kind)
        return self.generators[kind]()


def sentence(carrier, values):
    text, spans = b"", []
    for literal, kind in re.findall(r"([^{]*)(?:\{([A-Z_]+)\})?", carrier):
        text += literal.encode()
        if kind:
            v = values(kind).strip().encode()  # some Faker locales end a street with a space
            label = "STREET_ADDRESS" if kind == "ADDRESS" else kind
            spans.append({"start": len(text), "end": len(text) + len(v), "label": label})
            text += v
    return {"text": text.decode(), "spans": spans, "source": "generated"}


def joined(row, plain, before):
    """ROW with a sentence of plain text before or after it (offsets moved along)."""
    if not before:
        return dict(row, text=row["text"] + " " + plain)
    shift = len(plain.encode()) + 1
    return dict(row, text=plain + " " + row["text"],
                spans=[dict(s, start=s["start"] + shift, end=s["end"] + shift) for s in row["spans"]])


def main():
    if os.environ.get("PYTHONHASHSEED") != "0":  # some Faker locales pick from sets: fix their order
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--plain-rows", type=int, default=800)
    parser.add_argument("--wordnet", default="/usr/share/wordnet")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.wordnet, "data.noun")):
        sys.exit(f"no WordNet in {args.wordnet}: apt-get install wordnet-base")
    synsets = wordnet.read_wordnet(args.wordnet)
    names = wordnet_names(synsets)
    plain = plain_examples(synsets)
    rng = random.Random(5)
    values = Values(rng, names, brand_words(synsets), import_faker())
    with open(args.out, "w") as f:
        for i in range(args.rows):
            row = sentence(CARRIERS[i % len(CARRIERS)], values)
            if rng.random() < 0.25:  # entities amid ordinary prose
                row = joined(row, rng.choice(plain), rng.random() < 0.5)
            f.write(json.dumps(row) + "\n")
        for text in rng.sample(plain, min(args.plain_rows, len(plain))):
            f.write(json.dumps({"text": text, "spans": [], "source": "generated"}) + "\n")
    print(json.dumps({"rows": args.rows, "plain_rows": min(args.plain_rows, len(plain)), "carriers": len(CARRIERS),
                      "first_names": len(names[0]), "surnames": len(names[1]), "places": len(names[2]),
                      "organisations": len(names[3]), "plain_examples": len(plain)}))


if __name__ == "__main__":
    main()
