"""Model: every answer equals the CLI's on the same model (1e-5)."""

import math

import pytest

import semroute
from conftest import TOLERANCE, cli_json

QUESTIONS = ["What is the derivative of x^2 + 3x?", "Is a verbal agreement to sell a house legally binding?",
             "Ünïcödé — 日本語のテキスト", ""]


def close(a, b):
    return abs(a - b) <= TOLERANCE


def test_facts(domain, pii):
    assert domain.task == "sequence" and pii.task == "token"
    assert domain.model_type == "modernbert" and domain.hidden_size > 0 and domain.max_length > 0
    assert "math" in domain.labels and len(domain.labels) == 14 and not domain.multi_label
    assert domain.embedding_dim == 0
    assert semroute.version() and semroute.abi_version() == semroute._lib.ABI_VERSION


def test_classify_equals_the_cli(repo, domain):
    want = cli_json("classify", repo / "models/domain", *QUESTIONS)["results"]
    got = domain.classify_batch(QUESTIONS)
    assert len(got) == len(want) == len(QUESTIONS)
    for g, w in zip(got, want):
        assert (g.label, g.class_id) == (w["label"], w["class_id"])
        assert close(g.confidence, w["confidence"])
        assert g.probabilities.keys() == w["probabilities"].keys()
        assert all(close(g.probabilities[k], v) for k, v in w["probabilities"].items())
        assert (g.input.input_tokens, g.input.processed_tokens, g.input.truncated) == (
            w["input"]["input_tokens"], w["input"]["processed_tokens"], w["input"]["truncated"])
    single = domain.classify(QUESTIONS[0])
    assert single.label == got[0].label and close(single.confidence, got[0].confidence)
    assert math.isclose(sum(single.probabilities.values()), 1.0, abs_tol=1e-5)


def test_entities_equal_the_cli_with_python_indices(repo, pii):
    texts = ["My email is jane.doe@example.com", "Écrivez à josé, jose@exemple.fr — Paris", "no entities here"]
    want = cli_json("tokens", repo / "models/pii", *texts)["results"]
    got = pii.token_classify_batch(texts)
    assert len(got) == len(want) == len(texts)
    assert [r.entities for r in got] == pii.entities_batch(texts)
    for text, g, w in zip(texts, got, want):
        assert len(g.entities) == len(w["entities"])
        for e, we in zip(g.entities, w["entities"]):
            assert (e.label, e.byte_start, e.byte_end, e.text) == (we["type"], we["begin"], we["end"], we["text"])
            assert close(e.score, we["score"])
            assert text[e.start:e.end] == e.text  # indices into the str, not bytes
        assert [(t.token_id, t.label, t.byte_start, t.byte_end) for t in g.tokens] == [
            (t["id"], t["label"], t["begin"], t["end"]) for t in w["tokens"]]
        assert all(close(t.probability, wt["probability"]) for t, wt in zip(g.tokens, w["tokens"]))
    first = pii.entities(texts[0])
    assert [(e.label, e.start, e.end, e.text) for e in first] == [("EMAIL_ADDRESS", 12, 32, "jane.doe@example.com")]


def test_embeddings_similarity_and_top_k(tiny):
    texts = ["solve for x", "court ruling", "protein folding"]
    want = cli_json("embed", tiny / "intent", *texts)
    with semroute.Model(tiny / "intent", task="embedding") as model:
        got = model.embed_batch(texts)
        assert got.shape == (3, model.embedding_dim) and str(got.dtype) == "float32"
        assert [len(w) for w in want["embeddings"]] == [model.embedding_dim] * 3
        for row, w in zip(got, want["embeddings"]):
            assert max(abs(a - b) for a, b in zip(row, w)) <= TOLERANCE
        assert close(float((got[0] ** 2).sum()), 1.0)
        one = model.embed(texts[1])
        assert max(abs(a - b) for a, b in zip(one, got[1])) <= TOLERANCE
        cosine = float(got[0] @ got[2])
        assert close(model.similarity(texts[0], texts[2]), cosine)
        ranked = model.top_k(texts[0], texts, k=2)
        assert [m.index for m in ranked][0] == 0 and close(ranked[0].score, 1.0)
        assert ranked[0].score >= ranked[1].score and len(ranked) == 2
        short = model.embed(texts[0], dimension=16)
        assert len(short) == 16 and close(float((short ** 2).sum()), 1.0)
        vectors, usage = model.embed_with_input(texts)
        assert usage[0].processed_tokens > 0 and not usage[0].truncated


def test_rerank_equals_the_cli(tiny):
    query, documents = "how do I reset my password", ["Open settings, then Reset.", "Lisbon is in Portugal.",
                                                       "Passwords reset by mail."]
    want = cli_json("rerank", tiny / "reranker", query, *documents)
    with semroute.Model(tiny / "reranker", task="pair_scoring") as model:
        got = model.rerank(query, documents, k=3)
        ranked = want["ranked"]
        assert [m.index for m in got] == [r["index"] for r in ranked]
        assert all(close(m.score, r["score"]) for m, r in zip(got, ranked))
        scores = model.score_pairs([(query, d) for d in documents])
        assert all(close(scores[m.index], m.score) for m in got)


def test_tokenize_equals_the_cli(repo, domain):
    text = "Ünïcödé tokens, 42!"
    want = cli_json("tokenize", repo / "models/domain", text)
    got = domain.tokenize(text)
    assert got.ids == want["ids"]
    assert got.tokens == want["tokens"]
    assert [list(o) for o in got.offsets] == [list(o) for o in want["offsets"]]
    plain = domain.tokenize(text, add_special_tokens=False)
    assert plain.ids == got.ids[1:-1]


def test_windows_equal_the_cli(repo, domain):
    document = " ".join(["The court ruled on the contract."] * 40 + ["What is the integral of x?"] * 30)
    want = cli_json("classify", repo / "models/domain", document, "--windows", "--window-size", 64, "--overlap", 8)
    windows = domain.classify_windows(document, size=64, overlap=8)
    got_windows = want["results"][0]["windows"]
    assert len(windows) == len(got_windows) > 1
    for g, w in zip(windows, got_windows):
        assert g.classification.label == w["label"] and close(g.classification.confidence, w["confidence"])
        assert (g.byte_start, g.byte_end) == (w["begin"], w["end"])
    whole = domain.tokenize(document, whole=True)
    assert len(whole.ids) > domain.max_length


def test_bind_head_shares_the_encoder(repo):
    with semroute.Model(repo / "models/multitask/base", task="encoder") as base:
        with base.bind_head(repo / "models/domain", task="sequence") as head:
            assert head.shares_encoder(base) and head.labels[:2] == ["biology", "business"]
            assert head.classify("What is 2 + 2?").label in head.labels
