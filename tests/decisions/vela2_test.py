"""Vela 2.0 0.3B (`semroute decide`) against the reference in
vela2_reference.py: packages with random weights and the cosine and both
readouts; every answer of Choice, Noul, Score and Set questions within 1e-5
(questions in the order asked, options in the order listed, states as a
string, an object of typed parts and an array, `over`, a marker typed as
text), a state over max_length answered max_length_exceeded, and invalid
questions answered invalid_question without affecting the others. Each
package's requests go through one `semroute decide --input` (a line that is
no request answered with its error) and the reference's through one
tokenize and one forward: a process costs seconds under the sanitizers.

    vela2_test.py SEMROUTE_CLI REPO_DIR"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy  # noqa: F401
except ImportError:  # the reference needs Debian's python3-numpy, beside another interpreter on PATH
    if os.path.exists("/usr/bin/python3") and sys.executable != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    raise

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vela2_reference as reference  # noqa: E402

CLI, REPO = sys.argv[1], os.path.abspath(sys.argv[2])
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL", what)


def decide(package, requests):
    """Every request's answer, from one `semroute decide --input` (the model loaded once)."""
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    got = subprocess.run([CLI, "decide", package, "--input", "-"], input=lines, capture_output=True, text=True)
    failing = any(not isinstance(r, dict) for r in requests)  # a line that is no request: exit 1
    check(got.returncode == int(failing), f"decide exit {got.returncode}: {got.stderr[-300:]}")
    answers = [json.loads(line) for line in got.stdout.splitlines()]
    check([a.get("line") for a in answers] == list(range(1, len(requests) + 1)), "one answer per request, in order")
    return answers


def close(a, b, tolerance=1e-5):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= tolerance
    return a == b


def compare(got, want, what):
    """The CLI's answers against the reference's: single answers as they are, a Set's as sets + Noul answers."""
    for qid, w in want.items():
        if "threshold" in w:  # a Set question
            s = got["sets"].get(qid, {})
            check(close(s.get("probabilities"), w["probabilities"]) and got["thresholds"].get(qid) == w["threshold"],
                  f"{what} set {qid}: {s} (reference {w})")
            check(s.get("selected") == [k for k, p in w["probabilities"].items() if p > w["threshold"]],
                  f"{what} set {qid} selected {s.get('selected')}")
            for label, p in w["probabilities"].items():
                check(close(got["answers"].get(f"{qid}.{label}", {}).get("noul"), p), f"{what} {qid}.{label} noul")
            continue
        g = {k: v for k, v in got["answers"].get(qid, {}).items() if k != "type"}
        check(close(g, w), f"{what} {qid}: {g} (reference {w})")
    check(list(got["answers"]) == [a for q in want for a in ([q] if "threshold" not in want[q] else
                                                             [f"{q}.{k}" for k in want[q]["probabilities"]])],
          f"{what}: answers in the order asked {list(got['answers'])}")


QUESTIONS = {
    "domain": {"type": "choice", "instructions": "What is the subject of the request?",
               "criteria": {"math": "Mathematics", "law": None, "other": "Anything else"}},
    "guard": {"type": "noul", "instructions": "Is this a jailbreak attempt?"},
    "urgency": {"type": "score", "instructions": "How urgent is it?", "levels": ["low", "medium", "high"]},
    "topics": {"type": "set", "instructions": "Topics", "criteria": {"account": None, "billing": "money"},
               "over": "user"},
}


def main():
    work = tempfile.mkdtemp(prefix="semroute-vela2-")
    for readout, seed in (("cosine", 31), ("both", 32)):
        package, twin = reference.make_package(CLI, REPO, os.path.join(work, readout), readout, seed)
        user = "How do I reset my password? [Q] [O] Mail me at ana@example.com — ünïcödé 日本"
        cases = [
            ("object state", {"request": user, "source": "Accounts page help text."},
             [("user", user), ("context", "Accounts page help text.")], QUESTIONS),
            ("string state", "Solve 2x + 3 = 7 for x.", [("user", "Solve 2x + 3 = 7 for x.")],
             {"urgency": QUESTIONS["urgency"], "domain": QUESTIONS["domain"]}),
            ("array state", [3, {"b": 1, "a": "x"}], [("user", '[3,{"a":"x","b":1}]')],
             {"guard": QUESTIONS["guard"]}),
            ("several context keys, over a list", {"prompt": "Summarise this.", "doc": "A long report.",
                                                   "tools": "search", "answer": "It is short."},
             [("user", "Summarise this."), ("context", "doc:\nA long report.\n\ntools:\nsearch"),
              ("answer", "It is short.")],
             {"faithful": {"type": "noul", "instructions": "Is the answer faithful?", "over": ["answer", "doc"],
                           "criteria": {"false": "Unfaithful.", "true": None}},
              "tone": {"type": "choice", "instructions": "Tone",
                       "choices": [{"key": "formal"}, {"key": "casual", "description": "Relaxed"}]}}),
        ]
        over_length = {"state": "word " * 600, "questions": {"guard": QUESTIONS["guard"]}}
        invalid = {"state": "hi", "questions": {
            "bad": {"type": "choice", "instructions": "x", "criteria": {"only": None}},
            "worse": {"type": "guess", "instructions": "x"},
            "extra": {"type": "noul", "instructions": "x", "colour": 1},
            "guard": QUESTIONS["guard"]}}
        *got, too_long, mixed, broken = decide(package, [{"state": state, "questions": questions}
                                                         for _, state, _, questions in cases] +
                                               [over_length, invalid, "not a request"])
        wants = reference.reference(CLI, package, twin, [(parts, reference_questions(questions))
                                                         for _, _, parts, questions in cases])
        for (what, _, _, _), g, want in zip(cases, got, wants):
            compare(g, want, f"{readout}, {what}")
        check(too_long["answers"]["guard"].get("error") == "max_length_exceeded", f"over max_length: {too_long}")
        check([mixed["answers"][k].get("error") for k in ("bad", "worse", "extra")] == ["invalid_question"] * 3 and
              "noul" in mixed["answers"]["guard"], f"invalid questions answered alone: {mixed['answers']}")
        check("error" in broken and "answers" not in broken, f"a line that is no request: {broken}")
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("vela2: every answer equals the reference")


def reference_questions(questions):
    """The request's questions in the reference's form (choices as criteria, Noul descriptions, `over` roles)."""
    roles = {"doc": "context", "tools": "context"}
    out = {}
    for qid, q in questions.items():
        q = dict(q)
        if "choices" in q:
            q["criteria"] = {c["key"]: c.get("description") for c in q.pop("choices")}
        if "over" in q and isinstance(q["over"], list):
            q["over"] = [roles.get(o, o) for o in q["over"]]
        out[qid] = q
    return out


if __name__ == "__main__":
    main()
