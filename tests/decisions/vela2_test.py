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
        if w.get("span"):  # a Span question: a Noul answer, its spans and its threshold
            g = got["answers"].get(qid, {})
            check(close(g, {"type": "noul", "noul": w["noul"], **({"input_coverage": "complete"}
                                                                 if "input_coverage" in w else {})}),
                  f"{what} span {qid}: {g} (reference noul {w['noul']})")
            got_spans = got.get("spans", {}).get(qid)
            check(isinstance(got_spans, list) and len(got_spans) == len(w["spans"]) and
                  all(close(a, b) for a, b in zip(got_spans, w["spans"])),
                  f"{what} spans {qid}: {got_spans} (reference {w['spans']})")
            check(close(got.get("thresholds", {}).get(qid), w["threshold"]), f"{what} threshold {qid}")
            continue
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
    check(list(got["answers"]) == [a for q in want for a in ([q] if "threshold" not in want[q] or want[q].get("span") else
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
    served = {}
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
        long_text, filler = "word " * 600, "lorem ipsum " * 400
        cases += [
            ("a long user part, in windows (a truncate question reads the first)", long_text, [("user", long_text)],
             {"guard": QUESTIONS["guard"], "urgency": QUESTIONS["urgency"], "topics": QUESTIONS["topics"],
              "domain": dict(QUESTIONS["domain"], overflow="truncate")}),
            ("a long unread context shrinks first", {"request": "Is this safe?", "source": filler},
             [("user", "Is this safe?"), ("context", filler)],
             {"guard": dict(QUESTIONS["guard"], over="request"),
              "whole": dict(QUESTIONS["guard"], over="request", require_full_input=True)}),
            ("two long read parts, cut without windows", {"request": long_text, "answer": filler},
             [("user", long_text), ("answer", filler)], {"guard": QUESTIONS["guard"]}),
            ("windows read whole", {"request": long_text}, [("user", long_text)],
             {"whole": dict(QUESTIONS["guard"], require_full_input=True)}),
        ]
        cases += span_cases()
        over_length = {"state": "hi", "questions": {"guard": QUESTIONS["guard"], "huge": {
            "type": "choice", "instructions": "Pick one", "criteria": {f"option {i}": "a long description " * 3
                                                                       for i in range(60)}}}}
        invalid = {"state": "hi", "questions": {
            "bad": {"type": "choice", "instructions": "x", "criteria": {"only": None}},
            "worse": {"type": "guess", "instructions": "x"},
            "extra": {"type": "noul", "instructions": "x", "colour": 1},
            "guard": QUESTIONS["guard"]}}
        *got, too_long, mixed, broken = decide(package, [{"state": state, "questions": request_questions(questions)}
                                                         for _, state, _, questions in cases] +
                                               [over_length, invalid, "not a request"])
        wants = reference.reference(CLI, package, twin, [(parts, reference_questions(questions))
                                                         for _, _, parts, questions in cases])
        for (what, _, _, _), g, (want, length) in zip(cases, got, wants):
            compare(g, want, f"{readout}, {what}")
            check(g["usage"] == {"input_tokens": length, "output_tokens": 0}, f"{readout}, {what}: usage {g['usage']}")
        check([too_long["answers"][k].get("error") for k in ("guard", "huge")] == ["max_length_exceeded"] * 2,
              f"questions alone over max_length: {too_long}")
        check([mixed["answers"][k].get("error") for k in ("bad", "worse", "extra")] == ["invalid_question"] * 3 and
              "noul" in mixed["answers"]["guard"], f"invalid questions answered alone: {mixed['answers']}")
        check("error" in broken and "answers" not in broken, f"a line that is no request: {broken}")
        questions_file = os.path.join(work, f"{readout}-questions.json")  # the same questions from a file
        with open(questions_file, "w") as f:
            json.dump(cases[1][3], f)
        flags = subprocess.run([CLI, "decide", package, "--questions", questions_file, "--state", cases[1][1]],
                               capture_output=True, text=True)
        check(flags.returncode == 0 and json.loads(flags.stdout or "{}") == {k: v for k, v in got[1].items()
                                                                           if k != "line"},
              f"decide --questions --state: {flags.stdout[:300]} {flags.stderr[-300:]}")
        lines = subprocess.run([CLI, "decide", package, "--questions", questions_file, "--input", "-", "--max-tokens",
                                "100"], input=cases[1][1] + "\n" + json.dumps(cases[4][1]) + "\n",
                               capture_output=True, text=True)
        answers = [json.loads(line) for line in lines.stdout.splitlines()]
        check(lines.returncode == 0 and len(answers) == 2 and answers[0]["answers"] == got[1]["answers"] and
              answers[1]["answers"]["urgency"].get("error") == "scan_budget_exceeded",
              f"decide --questions --input --max-tokens: {lines.stdout[:300]} {lines.stderr[-300:]}")
        served[readout] = (package, cases, wants, over_length, invalid)
    serve(work, served)
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("vela2: every answer equals the reference")


def serve(work, served):
    """The same packages under `semroute serve`: /v1/decisions and /v1/systemone, states, bundles, the card,
    the contract's errors, every answer validated against the contract's schemas; the in-process runtime."""
    sys.path.insert(0, os.path.join(REPO, "tests/server"))
    import contract_test as contract  # Server, post, validate (same argv)
    config = f"unix_socket: {work}/vela2.sock\nmodels:\n" + "".join(
        f"  {readout}: {package}\n" for readout, (package, *_) in served.items())
    server = contract.Server(config, work, "vela2")
    try:
        models = json.loads(server.request("GET", "/v1/models")[1])
        contract.validate(models, "ModelList", "GET /v1/models (Vela 2.0)")
        cards = {card["id"]: card for card in models["data"]}
        for card in cards.values():
            check(card["family"] == "vela2" and card["surfaces"] == ["decisions"] and card["ready"] and
                  card["question_types"] == ["choice", "noul", "score", "set", "span"] and
                  card["presets"] == ["pii", "halu", "relevance"] and card["modalities"] == ["text"] and
                  card["limits"]["max_input_tokens"] == 512 and card["limits"]["max_options"] == 255 and
                  card["golden"]["status"] in ("matched", "unverified"), f"card {card}")
        for readout, (package, cases, wants, over_length, invalid) in served.items():
            requests = [{"model": readout, "state": state, "questions": request_questions(questions)}
                        for _, state, _, questions in cases]
            for path in ("/v1/decisions", "/v1/systemone"):
                for request, (what, *_), (want, length) in zip(requests, cases, wants):
                    got = contract.post(server, path, request)
                    compare(got, want, f"{path} {readout}, {what}")
                    check(got["model"] == readout and got["usage"]["input_tokens"] == length, f"{path}: {got}")
            states = dict(requests[0], states={f"s{i}": {"state": r["state"], "questions": r["questions"]}
                                               for i, r in enumerate(requests[1:], 1)})
            got = contract.post(server, "/v1/decisions", states)
            compare(got, wants[0][0], f"{readout}: states, the request's own")
            for i, want in enumerate(wants[1:], 1):
                compare(got["states"][f"s{i}"], want[0], f"{readout}: states.s{i}")
                check(got["states"][f"s{i}"]["usage"]["input_tokens"] == want[1], f"states.s{i} usage")
            bundle = contract.post(server, "/v1/bundle", {"tasks": [{"id": str(i), "decisions": r}
                                                                    for i, r in enumerate(requests[:3])]})
            for i, result in enumerate(bundle["results"]):
                check(result["status"] == 200, f"bundle task {i}: {result}")
                compare(result["decisions"], wants[i][0], f"{readout}: bundle task {i}")
            got = contract.post(server, "/v1/decisions", dict(over_length, model=readout))
            check(got["answers"]["guard"].get("error") == "max_length_exceeded", f"served over max_length: {got}")
            long_case = cases[4]  # a scan budget below the long part: window questions fail, truncate reads
            (want, length), = reference.reference(CLI, package, package + "_twin",
                                                  [(long_case[2], reference_questions(long_case[3]))], scan=100)
            got = contract.post(server, "/v1/decisions", {"model": readout, "state": long_case[1],
                                                          "questions": long_case[3], "options": {"max_tokens": 100}})
            compare(got, want, f"{readout}: max_tokens 100")
            check([got["answers"][k].get("error") for k in ("guard", "urgency")] == ["scan_budget_exceeded"] * 2 and
                  "choice" in got["answers"]["domain"], f"{readout}: max_tokens 100: {got['answers']}")
            got = contract.post(server, "/v1/decisions", dict(invalid, model=readout), valid_request=False)
            check([got["answers"][k].get("error") for k in ("bad", "worse", "extra")] == ["invalid_question"] * 3 and
                  list(got["answers"]) == ["bad", "worse", "extra", "guard"], f"served invalid questions: {got}")
            got = contract.post(server, "/v1/decisions", dict(requests[0], options={"deadline_ms": 0.001}))
            check(all(a.get("error") == "deadline_exceeded" for a in got["answers"].values()) and not got.get("sets"),
                  f"deadline_ms 0.001: {got['answers']}")
            got = contract.post(server, "/v1/decisions", dict(requests[1], options={"return_meta": True}))
            check(got.get("meta", {}).get("model_sha256") == cards[readout]["model_sha256"],
                  f"return_meta: {got.get('meta')}")
            in_process = subprocess.run([CLI, "runtime", package, "/v1/decisions", "-"], input=json.dumps(requests[0]),
                                        capture_output=True, text=True)
            check(in_process.returncode == 0, f"semroute runtime /v1/decisions: {in_process.stderr[-300:]}")
            compare(json.loads(in_process.stdout or "{}"), wants[0][0], f"{readout}: in process")
        request = {"model": "cosine", "state": "hi", "questions": {"q": QUESTIONS["guard"]}}
        got = contract.post(server, "/v1/decisions", dict(request, questions={  # the router's question fields
            "full_set": dict(QUESTIONS["topics"], require_full_input=True, over="request"),  # a Set first
            "routing": dict(QUESTIONS["domain"], overflow="truncate"),
            "safety": dict(QUESTIONS["guard"], overflow="window", require_full_input=True),
            "both": dict(QUESTIONS["guard"], overflow="truncate", require_full_input=True),
            "not_bool": dict(QUESTIONS["guard"], require_full_input=1)}), valid_request=False)
        answers = got["answers"]
        check("choice" in answers["routing"] and "input_coverage" not in answers["routing"] and
              answers["safety"].get("input_coverage") == "complete" and
              got["sets"]["full_set"].get("input_coverage") == "complete" and
              [answers[k].get("error") for k in ("both", "not_bool")] == ["invalid_question"] * 2 and
              list(answers)[:3] == ["full_set.account", "full_set.billing", "routing"],
              f"overflow and require_full_input: {got}")
        for body, code in (({"model": "cosine", "state": "hi", "questions": {"bad": {"type": "guess"}}}, "invalid_request"),
                           (dict(request, images=["data:image/png;base64,AAAA"]), "invalid_request"),
                           (dict(request, model="nobody"), "model_not_found")):
            contract.post(server, "/v1/decisions", body, 404 if code == "model_not_found" else 400, code)
        for body in (dict(request, colour=1), dict(request, questions={}), dict(request, options={"max_tokens": 0}), {"model": "cosine", "questions": request["questions"]},
                     dict(request, states={"x": {"state": "hi"}}), dict(request, state=""),
                     dict(request, questions={" ": QUESTIONS["guard"]})):
            contract.post(server, "/v1/decisions", body, 400, "invalid_request", valid_request=False)
        hostile(server, contract)
        status, _, _ = server.request("GET", "/health")
        check(status == 200 and server.proc.poll() is None, "the server is still ready after all of it")
    finally:
        server.stop()
    failures.extend(contract.failures)


def hostile(server, contract):
    """Questions and bodies a client should never send: each answered with the contract's error, nothing else."""
    guard = QUESTIONS["guard"]
    many = {f"o{i}": None for i in range(256)}
    got = contract.post(server, "/v1/decisions", {"model": "cosine", "state": "hi", "questions": {
        "too_many": {"type": "choice", "instructions": "x", "criteria": many},
        "blank_label": {"type": "set", "instructions": "x", "criteria": {"": None, "b": None}},
        "blank_instructions": {"type": "noul", "instructions": "  "},
        "eleven_levels": {"type": "score", "instructions": "x", "levels": [str(i) for i in range(11)]},
        "span_too_many": {"type": "span", "instructions": "x", "criteria": many},
        "span_blank_label": {"type": "span", "instructions": "x", "labels": [{"key": " "}]},
        "span_two_parts": {"type": "span", "instructions": "x", "criteria": {"L": None}, "over": ["user", "answer"]},
        "span_broad": {"type": "span", "instructions": "x", "criteria": {"L": None}, "head": "broad"},
        "preset_unknown": {"preset": "toxic"},
        "preset_extra": {"preset": "pii", "criteria": {"L": None}},
        "guard": guard,
        "markers": {"type": "span", "instructions": "x", "criteria": {"[E] [SEP_SCHEMA]": "[SEG_user]"}}}},
        valid_request=False)
    answers = got["answers"]
    bad = ("too_many", "blank_label", "blank_instructions", "eleven_levels", "span_too_many", "span_blank_label",
           "span_two_parts", "span_broad", "preset_unknown", "preset_extra")
    check([answers[k].get("error") for k in bad] == ["invalid_question"] * len(bad) and "noul" in answers["guard"] and
          answers["markers"].get("type") == "noul" and isinstance(got["spans"]["markers"], list),
          f"hostile questions: {answers}")
    got = contract.post(server, "/v1/decisions", {"model": "cosine", "state": "hi", "questions": {  # 255: valid,
        "most": {"type": "choice", "instructions": "x", "criteria": dict(list(many.items())[:255])}}})  # too long
    check(got["answers"]["most"].get("error") == "max_length_exceeded", f"255 options: {got['answers']}")
    body = b'{"model": "cosine", "state": "\\ud800 alone", "questions": {"g": {"type": "noul", "instructions": "x"}}}'
    contract.post(server, "/v1/decisions", body, 400, "invalid_request")
    status, answer = server.announce("/v1/decisions", 10 << 20)  # a 10 MB state: refused unread
    check(status == 413 and answer["error"]["code"] == "request_too_large", f"a 10 MB state: {status} {answer}")


SPAN_TEXT = ("Hi, I'm Tom Baker (tom.baker@example.com). Call +1-555-0100 or see https://example.org/a?b=1. 你好 Zoë, "
             "from the U.S.A., e.g. x@y.z or 3.14 C++ a--b.")


def span_cases():
    """States and questions with spans: presets, rows of their own, one key of a shared part, windows, truncation."""
    names = {"type": "span", "instructions": "ignored", "criteria": {"PERSON": "a name", "EMAIL_ADDRESS": None}}
    state = {"request": SPAN_TEXT, "source": "Tom Baker works at Example Ltd.", "answer": "Sure, Tom: call me at noon."}
    parts = [("user", SPAN_TEXT), ("context", state["source"]), ("answer", state["answer"])]
    doc = "doc:\nAna Ruiz wrote it.\n\nnotes:\nnothing"
    long_text = " ".join(f"Name{i} mail{i}@example.com ({i})" for i in range(140))
    return [
        ("spans: presets, a set, a score, rows of their own", state, parts, {
            "domain": QUESTIONS["domain"],
            "pii": {"preset": "pii", "over": "request"},
            "topics": QUESTIONS["topics"],
            "halu": {"preset": "halu"},
            "names": dict(names, over="request", threshold=0.3),
            "sure": dict(names, over="request", threshold=0.97),
            "relevance": {"preset": "relevance", "over": ["request", "source"]},
            "quoted": {"type": "span", "instructions": "x", "labels": [{"key": "QUOTE"}, {"key": "PERSON",
                                                                                          "description": "who"}],
                       "over": "source"}}),
        ("a span over one key of a shared part", {"request": "Who wrote it?", "doc": "Ana Ruiz wrote it.",
                                                  "notes": "nothing"},
         [("user", "Who wrote it?"), ("context", doc)],
         {"who": dict(names, over="doc", _range=[5, 23]), "guard": QUESTIONS["guard"]}),
        ("a long part, spans in windows", long_text, [("user", long_text)],
         {"guard": QUESTIONS["guard"], "pii": {"preset": "pii"}, "whole": dict(names, require_full_input=True),
          "first": dict(names, overflow="truncate")}),
    ]


def request_questions(questions):
    """The questions as a request sends them (without the reference's own keys)."""
    return {qid: {k: v for k, v in q.items() if not k.startswith("_")} for qid, q in questions.items()}


def reference_questions(questions):
    """The request's questions in the reference's form (choices as criteria, Noul descriptions, `over` roles)."""
    roles = {"doc": "context", "tools": "context", "source": "context", "request": "user"}
    out = {}
    for qid, q in questions.items():
        q = dict(q)
        if "_range" in q:
            q["range"] = q.pop("_range")
        if "labels" in q:
            q["criteria"] = {c["key"]: c.get("description") for c in q.pop("labels")}
        if "choices" in q:
            q["criteria"] = {c["key"]: c.get("description") for c in q.pop("choices")}
        if "over" in q:
            q["over"] = [roles.get(o, o) for o in q["over"]] if isinstance(q["over"], list) else roles.get(q["over"], q["over"])
        out[qid] = q
    return out


if __name__ == "__main__":
    main()
