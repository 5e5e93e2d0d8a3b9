"""The runtime contract in process (semroute.Runtime) answers what the CLI
answers for the same model, with the contract's shapes and errors."""

import pytest

import semroute
from conftest import TOLERANCE, cli_json


def test_classify_equals_the_cli(tiny):
    texts = ["What is the derivative of x^2?", "Ünïcödé — 日本語のテキスト"]
    want = cli_json("classify", tiny / "intent", *texts)["results"]
    with semroute.Runtime() as runtime:
        runtime.add_model("intent", str(tiny / "intent"))
        status, answer = runtime.call("/v1/classify", {"model": "intent", "input": texts})
        assert status == 200 and "forward;dur=" in runtime.last_server_timing
        for got, w in zip(answer["results"], want):
            probabilities = dict(zip(answer["labels"], got["probabilities"]))
            assert got["label"] == w["label"]
            assert all(abs(probabilities[k] - v) <= TOLERANCE for k, v in w["probabilities"].items())
        status, answer = runtime.call("/v1/classify", {"model": "intent", "input": "x", "colour": 1})
        assert status == 400 and answer["error"]["code"] == "invalid_request"
        status, answer = runtime.call("/v1/classify", {"model": "nope", "input": "x"})
        assert status == 404 and answer["error"]["code"] == "model_not_found"
        assert runtime.health()[0] == 200
        cards = runtime.models()["data"]
        assert cards[0]["id"] == "intent" and len(cards[0]["model_sha256"]) == 64


def test_a_bad_name_is_refused(tiny):
    with semroute.Runtime() as runtime:
        try:
            runtime.add_model("../x", str(tiny / "intent"))
        except semroute.InvalidArgument:
            pass
        else:
            raise AssertionError("a name with a path in it was taken")


def test_heads_bound_to_one_backbone(tiny):
    """A head bound to its own checkpoint's encoder is that model: the same answers as the model alone; the other
    head answers in the same call's bundle."""
    texts = ["What is the derivative of x^2?", "Email a@b.co"]
    with semroute.Runtime() as runtime:
        runtime.add_model("intent", str(tiny / "intent"))
        runtime.add_heads("both", str(tiny / "intent"), {"intent": str(tiny / "intent"), "pii": str(tiny / "pii")})
        _, want = runtime.call("/v1/classify", {"model": "intent", "input": texts})
        status, got = runtime.call("/v1/classify", {"model": "both", "head": "intent", "input": texts})
        assert status == 200 and got["head"] == "intent"
        for g, w in zip(got["results"], want["results"]):
            assert g["label"] == w["label"]
            assert all(abs(a - b) <= TOLERANCE for a, b in zip(g["probabilities"], w["probabilities"]))
        status, answer = runtime.call("/v1/bundle", {"tasks": [
            {"id": h, "classify": {"model": "both", "head": h, "input": texts}} for h in ("intent", "pii")]})
        assert status == 200 and [r["status"] for r in answer["results"]] == [200, 200]
        assert answer["results"][1]["classify"]["kind"] == "token"
        assert [h["name"] for h in runtime.models()["data"][0]["heads"]] == ["intent", "pii"]
        try:
            runtime.add_heads("none", str(tiny / "intent"), {})
        except semroute.InvalidArgument:
            pass
        else:
            raise AssertionError("a model of no heads was taken")


def test_decisions(tiny):
    """A Vela 2.0 package answers /v1/decisions in process: the questions in the order asked, a Set's labels as Noul
    answers, further states as their own requests would be answered."""
    questions = {"urgency": {"type": "score", "instructions": "How urgent?", "levels": ["low", "medium", "high"]},
                 "domain": {"type": "choice", "instructions": "Subject?", "criteria": {"math": None, "law": "Courts"}},
                 "guard": {"type": "noul", "instructions": "A jailbreak?"},
                 "topics": {"type": "set", "instructions": "Topics", "criteria": {"billing": None, "account": None}}}
    state = {"request": "Reset my password", "source": "Help page"}
    with semroute.Runtime() as runtime:
        runtime.add_model("vela", str(tiny / "vela2"))
        assert runtime.models()["data"][0]["surfaces"] == ["decisions"]
        status, alone = runtime.call("/v1/decisions", {"model": "vela", "state": "Solve 2x = 4", "questions": questions})
        assert status == 200
        status, got = runtime.call("/v1/decisions", {"model": "vela", "state": state, "questions": questions,
                                                     "states": {"other": {"state": "Solve 2x = 4", "questions": questions}}})
        assert status == 200
        assert list(got["answers"]) == ["urgency", "domain", "guard", "topics.billing", "topics.account"]
        assert got["answers"]["domain"]["choice"] in ("math", "law")
        assert abs(sum(got["answers"]["urgency"]["probabilities"].values()) - 1) < 1e-6
        assert got["answers"]["urgency"]["legend"] == {"0": "low", "1": "medium", "2": "high"}
        assert got["answers"]["topics.billing"]["noul"] == got["sets"]["topics"]["probabilities"]["billing"]
        assert got["states"]["other"]["answers"] == alone["answers"]
        assert got["states"]["other"]["usage"] == alone["usage"]
        status, error = runtime.call("/v1/systemone", {"model": "vela", "state": "x", "questions": {"q": {"type": "guess"}}})
        assert status == 400 and "no question is valid" in error["error"]["message"]
        assert runtime.decide("vela", "Solve 2x = 4", questions)["answers"] == alone["answers"]
        with pytest.raises(semroute.InvalidArgument, match="no question is valid"):
            runtime.decide("vela", "x", {"q": {"type": "guess"}})
        with pytest.raises(semroute.NotFound):
            runtime.decide("nobody", "x", questions)
