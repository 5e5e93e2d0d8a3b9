"""Decision 2.0 (`semroute decide`, `semroute serve`) against the reference
in decision2_reference.py, on a package with random weights in the
published layout (`semroute make-model --decision2`): every answer of
Choice, Noul and Score questions within 1e-5, prompts rendered with
canonical JSON (floats, non-ASCII, control characters, objects as
instructions and descriptions), score bias and calibration, several states,
questions over max_input_tokens, the family's own question rules; served:
the card (family, question types, limits, model_sha256 equal to the identity
computed here), every answer validated against the contract's schemas,
max_tokens refused; and a package whose files are not what its manifest says
is never read (a changed byte, an extra file, a missing one, a link, another
pointer).

    decision2_test.py SEMROUTE_CLI REPO_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vela2_test as shared  # noqa: E402  (check, close, decide; the same argv; runs under an interpreter with numpy)
import decision2_reference as reference  # noqa: E402

CLI, REPO = shared.CLI, shared.REPO
check = shared.check

QUESTIONS = {
    "domain": {"type": "choice", "instructions": "Which domain does this request belong to?",
               "criteria": {"code": "Programming", "math": "Mathematics", "other": None}},
    "reasoning": {"type": "noul", "instructions": "Does answering this request need multi-step reasoning?"},
    "difficulty": {"type": "score", "instructions": "How difficult is this request?",
                   "levels": ["Trivial", "Moderate", "Hard"]},
}
CASES = [
    ("the golden request", "Write a Python function that merges two sorted lists and explain its running time.",
     QUESTIONS),
    ("canonical JSON: floats, non-ASCII, control characters, objects", {
        "request": "Ünïcödé 中文 🚀 <|endoftext|> inline \"quoted\" \\ back\tslash\n", "b": [1.0, 1e-05, 1e16, 0.1, -0, 12345678901234567890],
        "a": {"z": None, "y": True, "x": "\u0001\u007f\u2028/"}}, {
        "strict": {"type": "noul", "instructions": {"q": "Is it code?", "n": [1, 2.5]},
                   "criteria": {"true": "Definitely"}, "require_full_input": True},
        "pick": {"type": "choice", "instructions": "Pick one",
                 "choices": [{"key": "b", "description": "B"}, {"key": "a"}, {"key": "c", "description": {"k": [1]}}]},
        "five": {"type": "score", "instructions": "Rate it", "levels": ["1", "2", "3", "4", {"top": 5}]},
        "four": {"type": "score", "instructions": "Rate it", "criteria": ["a", "b", "c", "d"]},
        "bare": {"type": "noul", "instructions": "Yes?", "criteria": {"false": None}},
        "listed": {"type": "noul", "instructions": "Sure?", "choices": [{"key": "true", "description": "Certainly"}]}}),
    ("an array state", [3, {"b": 1, "a": "x"}, "é"], {"reasoning": QUESTIONS["reasoning"]}),
    ("a state over max_input_tokens", "word " * 3000, {"domain": QUESTIONS["domain"],
                                                       "difficulty": QUESTIONS["difficulty"]}),
]
INVALID = {
    "set": {"type": "set", "instructions": "x", "criteria": {"a": None}},
    "over": {"type": "noul", "instructions": "x", "over": "request"},
    "preset": {"preset": "pii"},
    "one": {"type": "choice", "instructions": "x", "criteria": {"a": None}},
    "duplicate": {"type": "choice", "instructions": "x", "choices": [{"key": "a"}, {"key": "a"}]},
    "levels_on_choice": {"type": "choice", "instructions": "x", "levels": ["a", "b"]},
    "blank_description": {"type": "choice", "instructions": "x", "criteria": {"a": "", "b": None}},
    "extra_choice_key": {"type": "choice", "instructions": "x", "choices": [{"key": "a", "colour": 1}, {"key": "b"}]},
    "noul_maybe": {"type": "noul", "instructions": "x", "choices": [{"key": "maybe"}]},
    "reasoning": QUESTIONS["reasoning"],
}


def main():
    work = tempfile.mkdtemp(prefix="semroute-decision2-")
    package = os.path.join(work, "kai")
    subprocess.run([CLI, "make-model", "tiny", package, "--decision2", "--seed", "7"], check=True, capture_output=True)
    got = shared.decide(package, [{"state": s, "questions": q} for _, s, q in CASES] + [{"state": "hi", "questions": INVALID}])
    wants = reference.reference(CLI, package, [(s, q) for _, s, q in CASES])
    for (what, _, _), g, (want, length) in zip(CASES, got, wants):
        for qid, w in want.items():
            a = {k: v for k, v in g["answers"].get(qid, {}).items() if k not in ("type", "message")}
            check(shared.close(a, w), f"{what} {qid}: {a} (reference {w})")
        check(list(g["answers"]) == list(want), f"{what}: answers in the order asked")
        check(g["usage"] == {"input_tokens": length, "output_tokens": 0}, f"{what}: usage {g['usage']}")
    invalid = got[-1]["answers"]
    check([invalid[k].get("error") for k in INVALID if k != "reasoning"] == ["invalid_question"] * (len(INVALID) - 1)
          and "noul" in invalid["reasoning"], f"the family's question rules: {invalid}")
    check("do not take ['over']" in invalid["over"]["message"] and "type must be one of" in invalid["set"]["message"],
          f"invalid_question messages: {invalid}")
    serve(work, package, wants)
    verification(work, package)
    if shared.failures:
        print(f"{len(shared.failures)} failures")
        sys.exit(1)
    print("decision2: every answer equals the reference")


def serve(work, package, wants):
    sys.path.insert(0, os.path.join(REPO, "tests/server"))
    import contract_test as contract  # Server, post, validate (same argv)
    server = contract.Server(f"unix_socket: {work}/decision2.sock\nmodels:\n  kai: {package}\n", work, "decision2")
    try:
        models = json.loads(server.request("GET", "/v1/models")[1])
        contract.validate(models, "ModelList", "GET /v1/models (Decision 2.0)")
        card = models["data"][0]
        check(card["family"] == "decision2" and card["question_types"] == ["choice", "noul", "score"] and
              card["presets"] == [] and card["limits"]["max_input_tokens"] == 2048 and
              "max_scan_tokens" not in card["limits"] and card["ready"] and
              card["model_sha256"] == reference.identity(package), f"card {card}")
        requests = [{"model": "kai", "state": s, "questions": q} for _, s, q in CASES]
        for path in ("/v1/decisions", "/v1/systemone"):
            for request, (what, *_), (want, length) in zip(requests, CASES, wants):
                got = contract.post(server, path, request)
                for qid, w in want.items():
                    a = {k: v for k, v in got["answers"][qid].items() if k not in ("type", "message")}
                    check(shared.close(a, w), f"{path} {what} {qid}: {a}")
                check(got["usage"]["input_tokens"] == length, f"{path} {what}: usage")
        states = dict(requests[0], states={f"s{i}": {"state": r["state"], "questions": r["questions"]}
                                           for i, r in enumerate(requests[1:3], 1)})
        got = contract.post(server, "/v1/decisions", states)
        for i in (1, 2):
            for qid, w in wants[i][0].items():
                a = {k: v for k, v in got["states"][f"s{i}"]["answers"][qid].items() if k != "type"}
                check(shared.close(a, w), f"states.s{i} {qid}: {a}")
        contract.post(server, "/v1/decisions", dict(requests[0], options={"max_tokens": 100}), 400, "invalid_request")
        got = contract.post(server, "/v1/decisions", dict(requests[0], options={"deadline_ms": 0.001}))
        check(all(a.get("error") == "deadline_exceeded" for a in got["answers"].values()), f"deadline: {got}")
    finally:
        server.stop()
    shared.failures.extend(contract.failures)


def verification(work, package):
    """Packages that are not what their manifest says: refused before anything is read."""
    def refused(mutate, expect):
        broken = os.path.join(work, "broken")
        shutil.rmtree(broken, ignore_errors=True)
        shutil.copytree(package, broken, symlinks=True)
        mutate(broken)
        got = subprocess.run([CLI, "decide", broken, "-"], input=json.dumps({"state": "x", "questions": QUESTIONS}),
                             capture_output=True, text=True)
        check(got.returncode != 0 and expect in got.stderr, f"{expect}: exit {got.returncode} {got.stderr[-300:]}")

    def flip(path):
        with open(path, "r+b") as f:
            f.seek(-1, 2)
            last = f.read(1)
            f.seek(-1, 2)
            f.write(bytes([last[0] ^ 1]))

    def edit(name, change):
        def mutate(d):
            with open(os.path.join(d, name)) as f:
                j = json.load(f)
            change(j)
            with open(os.path.join(d, name), "w") as f:
                json.dump(j, f)
        return mutate

    refused(lambda d: flip(os.path.join(d, "decision_head.safetensors")), "changed [decision_head.safetensors]")
    refused(lambda d: open(os.path.join(d, "notes.txt"), "w").close(), "extra [notes.txt]")
    refused(lambda d: os.remove(os.path.join(d, "README.md")), "missing [README.md]")
    refused(lambda d: os.symlink("README.md", os.path.join(d, "link.md")), "package contains a link")
    refused(edit("config.json", lambda j: j.update(format_version=1)), "not a Vela 2.0 or Decision 2.0 package")
    refused(edit("MODEL_MANIFEST.json", lambda j: j.update(profile="kai-native")), "not served by the decision2 family")
    refused(edit("MODEL_MANIFEST.json", lambda j: j["identity"].update(model_sha256="0" * 64)), "model identity differs")
    refused(edit("MODEL_MANIFEST.json", lambda j: j["parameters"]["packaged"].update(head=1)),
            "packaged tensor counts differ")


if __name__ == "__main__":
    main()
