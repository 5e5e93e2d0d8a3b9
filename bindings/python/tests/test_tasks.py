"""The multi-task engine, the unified classifier, the router, the
compressor and the hallucination detector against the CLI's answers."""

import json

import pytest

import semroute
from conftest import TOLERANCE, cli_json, run_cli

PROMPT = "Call me at 212-555-0187, this is David Kim. How do I solve 3x + 7 = 22?"


def same_answer(got: semroute.TaskAnswer, want: dict):
    assert (got.task, got.path, got.reason) == (want["task"], want["path"], want["reason"])
    if "label" in want:
        assert got.kind == "sequence" and got.label == want["label"]
        assert len(got.probabilities) == len(want["probabilities"])
        assert abs(got.confidence - want["confidence"]) <= TOLERANCE
        assert all(abs(p - w) <= TOLERANCE for p, w in zip(got.probabilities, want["probabilities"].values()))
        assert abs(got.risk - want["risk"]) <= TOLERANCE and got.flagged == want["flagged"]
    else:
        assert got.kind == "token"
        assert [(e.label, e.byte_start, e.byte_end, e.text) for e in got.entities] == [
            (e["type"], e["begin"], e["end"], e["text"]) for e in want["entities"]]


def test_unified_equals_the_cli(repo):
    want = cli_json("unified", repo / "models/router.yaml", PROMPT)["results"][0]["tasks"]
    with semroute.Unified(repo / "models/router.yaml") as unified:
        got = unified.classify(PROMPT)
        assert list(got) == [w["task"] for w in want]
        for w in want:
            same_answer(got[w["task"]], w)
        only = unified.classify_batch([PROMPT, "hello"], tasks=["security"])
        assert [list(a) for a in only] == [["security"], ["security"]]
        assert only[0]["security"].label == got["security"].label
        with pytest.raises(semroute.Error):
            unified.classify(PROMPT, tasks=["no such task"])


def test_engine_equals_the_unified_lora_path(repo, tmp_path):
    m = repo / "models/multitask"
    with semroute.Engine(m / "base", {"domain": m / "domain", "pii": (m / "pii", "token")}) as engine:
        assert engine.tasks == ["domain", "pii"]
        got = engine.classify(PROMPT)
    # The unified config keeps the adapter's entities at its threshold; the engine returns all. The
    # default config at its card's threshold, and a copy whose threshold splits this prompt's entities.
    card = json.loads((m / "pii" / "evaluation.json").read_text())["entity_threshold"]
    scores = sorted(e.score for e in got["pii"].entities)
    assert len(scores) >= 2 and scores[0] < scores[-1]
    split = (scores[0] + scores[-1]) / 2
    config = (repo / "models/router.yaml").read_text().replace(f"threshold: {card}}}", f"threshold: {split}}}")
    assert f"threshold: {split}}}" in config
    # Its paths made absolute ("model: " also ends "base_model: ").
    (tmp_path / "router.yaml").write_text(config.replace("model: ", f"model: {repo / 'models'}/")
                                          .replace("adapter: ", f"adapter: {repo / 'models'}/"))
    for path, threshold in ((repo / "models/router.yaml", card), (tmp_path / "router.yaml", split)):
        with semroute.Unified(path) as unified:
            want = unified.classify(PROMPT, tasks=["domain", "pii"])
        assert got["domain"].label == want["domain"].label
        assert abs(got["domain"].confidence - want["domain"].confidence) <= TOLERANCE
        assert [e.text for e in got["pii"].entities if e.score >= threshold] == [e.text for e in want["pii"].entities]
    assert 0 < len(want["pii"].entities) < len(got["pii"].entities)
    with pytest.raises(semroute.InvalidArgument):
        semroute.Engine(m / "base", {})


def request_file(repo, name):
    return repo / "examples/router/requests" / name


@pytest.mark.parametrize("name", ["math.json", "code.json", "card.json", "urgent.json", "jailbreak.json"])
def test_router_equals_the_cli(repo, name):
    want = cli_json("route", repo / "examples/router/router.yaml", request_file(repo, name))
    with semroute.Router(repo / "examples/router/router.yaml") as router:
        with router.route(json.loads(request_file(repo, name).read_text())) as route:
            assert (route.decision, route.model, route.blocked) == (want["decision"], want["model"], want["blocked"])
            assert abs(route.confidence - want["confidence"]) <= TOLERANCE
            assert route.request == want["request"] and route.headers == want["headers"]
            assert route.trace["decision"] == want["decision"]
            assert (route.response is not None) == route.blocked


def test_router_cache_and_errors(repo):
    with semroute.Router(repo / "examples/router/router.yaml") as router:
        request = request_file(repo, "math.json").read_text()  # JSON text works as well as a dict
        first = router.route(request)
        assert not first.cache_hit and first.headers["x-semroute-cache"] == "miss"
        assert router.store_answer(first, {"id": "cached-1", "object": "chat.completion", "choices": []})
        second = router.route(request, metadata={"user": "test"})
        assert second.cache_hit and second.response["id"] == "cached-1"
        assert not router.store_answer(second, "{}")
        with pytest.raises(semroute.Error) as caught:
            router.route("{not json")
        assert caught.value.code == semroute.Code.INVALID_ARGUMENT
    with pytest.raises(semroute.NotFound):
        semroute.Router(repo / "nowhere.yaml")


def test_compressor_equals_the_cli(tmp_path, tiny):
    text = "Please read the report.\n" + "".join(f"Nothing new happened in week {i % 9}.\n" for i in range(200)) + \
        "The Lisbon office closed after the audit of 2024.\nWhat changed?\n"
    (tmp_path / "long.txt").write_text(text)
    want = cli_json("compress", tmp_path / "long.txt", "--max-tokens", 40, "--tokenizer", tiny / "intent")
    with semroute.Compressor(max_tokens=40, tokenizer=tiny / "intent") as compressor:
        got = compressor.compress(text)
        assert (got.text, got.tokens, got.language, got.reduced) == (want["text"], want["tokens"], want["language"],
                                                                     want["compressed"])
        assert [list(r) for r in got.ranges] == want["ranges"]
        with pytest.raises(semroute.InvalidUTF8):
            compressor.compress(b"bad \xff")
    with pytest.raises(semroute.InvalidArgument):
        semroute.Compressor(languages="xx")


CONTEXT = "The Eiffel Tower is in Paris. It was completed in 1889 and is 330 metres tall."
ANSWER = "It was finished in 1889. It is 500 metres tall!\nParis is in Spain."


def check_detector_equals_the_cli(detector, tmp_path, tiny):
    """A detector (in process or the sidecar's) judges as the CLI does, whole and streamed."""
    (tmp_path / "context.txt").write_text(CONTEXT)
    (tmp_path / "answer.txt").write_text(ANSWER)
    lines = run_cli("check-answer", tiny / "halluc", "--context", tmp_path / "context.txt", "--question",
                    "Tell me about the tower.", tmp_path / "answer.txt", "--json", ok_codes=(0, 3))
    want = [json.loads(line) for line in lines.splitlines() if line.strip()]
    assert len(want) == 3
    got = detector.detect(CONTEXT, ANSWER, question="Tell me about the tower.")
    assert [(s.byte_start, s.byte_end, s.event) for s in got] == [(w["begin"], w["end"], w["event"]) for w in want]
    for s, w in zip(got, want):
        assert abs(s.max_score - w["max_score"]) <= TOLERANCE
        assert [(p.byte_start, p.byte_end, p.severity_name) for p in s.spans] == [
            (p["begin"], p["end"], p["severity"]) for p in w["spans"]]
    with detector.stream(CONTEXT, question="Tell me about the tower.") as stream:
        streamed = []
        for chunk in (ANSWER[:10], ANSWER[10:30], ANSWER[30:]):
            streamed += stream.feed(chunk)
        streamed += stream.finish()
    assert [(s.byte_start, s.byte_end, s.event) for s in streamed] == [(s.byte_start, s.byte_end, s.event)
                                                                        for s in got]
    with pytest.raises(semroute.Closed):
        stream.feed("more")
    with pytest.raises(semroute.InvalidArgument):
        detector.detect("", ANSWER)


def test_hallucination_detector_equals_the_cli(tmp_path, tiny):
    with semroute.HallucinationDetector(tiny / "halluc") as detector:
        check_detector_equals_the_cli(detector, tmp_path, tiny)
    with pytest.raises(semroute.InvalidArgument):
        semroute.HallucinationDetector(tiny / "halluc", no_such_option=1)


def test_router_checks_the_answers_it_asks_for(tmp_path, tiny):
    config = tmp_path / "router.yaml"
    config.write_text(f"hallucination: {{model: {tiny / 'halluc'}}}\n"
                      "signals: {facts: {kind: keywords, keywords: [tower]}}\n"
                      "decisions: [{name: rag, when: facts, check_answer: true}]\n")
    request = {"messages": [{"role": "user", "content": "How tall is the tower?"},
                            {"role": "tool", "tool_call_id": "1", "content": "The tower is 330 metres tall."}]}
    with semroute.Router(config) as router:
        route = router.route(request)
        assert route.check_answer and route.headers["x-semroute-check-answer"] == "true"
        with router.check_answer(route, sse=False) as stream:
            sentences = stream.feed("It is 330 metres tall. ") + stream.finish()
        assert len(sentences) == 1 and sentences[0].byte_end == 22
        with pytest.raises(semroute.InvalidArgument):
            router.check_answer(router.route({"messages": [{"role": "user", "content": "hello"}]}), sse=False)
