"""The sidecar client answers what the in-process classes answer, on a
`semroute serve` this module starts (TCP and a Unix socket)."""

import json
import subprocess

import pytest

import semroute
from conftest import TOLERANCE
from test_tasks import check_detector_equals_the_cli


@pytest.fixture(scope="module")
def server(repo, tiny, tmp_path_factory):
    d = tmp_path_factory.mktemp("serve")
    m = repo / "models"
    (d / "serve.yaml").write_text(
        f"listen: 127.0.0.1:0\nunix_socket: {d}/serve.sock\nmodels:\n  domain: {m}/domain\n  pii: {m}/pii\n"
        f"  encoder: {{path: {m}/multitask/base, task: embedding}}\nunified:\n  default: {m}/router.yaml\n"
        f"routers:\n  default: {repo}/examples/router/router.yaml\ndetectors:\n  halluc: {tiny}/halluc\n")
    proc = subprocess.Popen([semroute.cli_path(), "serve", str(d / "serve.yaml")], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().split()
    assert line and line[0] == "listening", line
    yield line[1], f"unix://{d}/serve.sock"
    proc.terminate()
    assert proc.wait(timeout=60) == 0


def test_models_answer_as_in_process(server, domain, pii):
    texts = ["What is the derivative of x^2 + 3x?", "Écrivez à José, jose@example.com"]
    for address in server:
        client = semroute.Client(address)
        answers, expected = client.model("domain").classify_batch(texts), domain.classify_batch(texts)
        assert len(answers) == len(expected) == len(texts)
        for got, want in zip(answers, expected):
            assert got.label == want.label and got.class_id == want.class_id
            assert all(abs(got.probabilities[k] - v) <= TOLERANCE for k, v in want.probabilities.items())
            assert got.input == want.input
        got = client.model("pii").entities(texts[1])
        want = pii.entities(texts[1])
        assert [(e.label, e.start, e.end, e.byte_start, e.text) for e in got] == \
            [(e.label, e.start, e.end, e.byte_start, e.text) for e in want]


def test_embeddings_unified_and_router(server, repo):
    client = semroute.Client(server[0])
    with semroute.Model(repo / "models/multitask/base", task="embedding") as encoder:
        want = encoder.embed_batch(["solve for x", "court ruling"])
    got = client.model("encoder").embed_batch(["solve for x", "court ruling"])
    assert got.shape == want.shape == (2, want.shape[1]) and want.shape[1] > 0
    assert abs(got - want).max() <= TOLERANCE
    assert abs(client.model("encoder").similarity("solve for x", "solve for x") - 1.0) <= 1e-5
    with semroute.Unified(repo / "models/router.yaml") as unified:
        want = unified.classify("Call me at 212-555-0187. How do I solve 3x + 7 = 22?")
    got = client.unified("default").classify("Call me at 212-555-0187. How do I solve 3x + 7 = 22?")
    assert list(got) == list(want)
    assert got["domain"].label == want["domain"].label and abs(got["domain"].confidence - want["domain"].confidence) <= TOLERANCE
    router = client.router()
    request = json.loads((repo / "examples/router/requests/math.json").read_text())
    first = router.route(request, metadata={"role": "admin"})
    assert first.decision == "stem" and first.headers["x-semroute-decision"] == "stem"
    assert router.store_answer(first, {"id": "py-1", "object": "chat.completion", "choices": []})
    again = router.route(request)
    assert again.cache_hit and again.response["id"] == "py-1"


def test_errors_keep_their_codes(server):
    client = semroute.Client(server[0])
    with pytest.raises(semroute.NotFound):
        client.model("missing").classify("x")
    with pytest.raises(semroute.InvalidArgument):
        client.model("pii").classify("x")
    with pytest.raises(semroute.InvalidArgument):
        semroute.Client("ftp://nowhere")
    with pytest.raises(OSError):
        semroute.Client("http://127.0.0.1:1", timeout=2).model("domain").classify("x")


def test_detector_answers_as_in_process(server, tmp_path, tiny):
    for address in server:
        check_detector_equals_the_cli(semroute.Client(address).detector("halluc"), tmp_path, tiny)
