#!/usr/bin/env python3
"""`semroute serve` under the vLLM Semantic Router's model runtime contract:
every answer of every contract path, errors included, validated against the
contract's own OpenAPI schemas (tests/data/srun/openapi.yaml, through
python3-jsonschema), the Server-Timing header on every surface answer, and
the answers against the CLI's on the same models.

    contract_test.py SEMROUTE_CLI REPO_DIR"""
import base64
import hashlib
import http.client
import json
import math
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import warnings

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runtime_packages  # noqa: E402  (the packages in upstream's layouts, random weights)

warnings.filterwarnings("ignore", category=DeprecationWarning)  # RefResolver: newer jsonschema prefers `referencing`

CLI, REPO = sys.argv[1], os.path.abspath(sys.argv[2])
PACKAGES = {}
MODELS = os.path.join(REPO, "models")
PHASES = ["parse", "tokenize", "queue", "forward", "post", "serialize", "total"]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL", what, flush=True)


def draft4(node):
    """OpenAPI 3.0 schema objects as JSON Schema draft 4 (nullable -> a null type)."""
    if isinstance(node, list):
        return [draft4(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: draft4(v) for k, v in node.items() if k not in ("nullable", "format", "example")}
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = out["enum"] + [None]
        elif "$ref" in out:
            out = {"anyOf": [{"$ref": out.pop("$ref")}, {"type": "null"}]}
    return out


with open(os.path.join(REPO, "tests/data/srun/openapi.yaml")) as f:
    CONTRACT = draft4(yaml.safe_load(f))


def validate(value, schema_name, what):
    schema = {"$ref": f"#/components/schemas/{schema_name}"}
    validator = jsonschema.Draft4Validator(schema, resolver=jsonschema.RefResolver("", CONTRACT))
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
    check(not errors, f"{what}: not a {schema_name}: " + "; ".join(
        f"{list(e.path)}: {e.message[:200]}" for e in errors[:3]))


class Server:
    def __init__(self, config_text, workdir, name="contract", args=None):
        self.config = os.path.join(workdir, f"{name}.yaml")
        with open(self.config, "w") as f:
            f.write(config_text)
        self.proc = subprocess.Popen([CLI, "serve", *(args or [self.config])], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening"):
            raise RuntimeError(f"serve did not start: {line!r} {self.proc.stderr.read()}")
        self.unix = line.split("unix://", 1)[1].split()[0]

    def request(self, method, path, body=None):
        c = http.client.HTTPConnection("localhost", timeout=60)
        c.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.sock.settimeout(60)
        c.sock.connect(self.unix)
        try:
            data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
            c.request(method, path, body=data, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, r.read(), {k.lower(): v for k, v in r.getheaders()}
        finally:
            c.close()

    def announce(self, path, length):
        """POSTs only the headers of a `length`-byte body: (status, answer) of a server that refuses it unread."""
        c = http.client.HTTPConnection("localhost", timeout=60)
        c.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.sock.connect(self.unix)
        try:
            c.putrequest("POST", path)
            c.putheader("Content-Length", str(length))
            c.endheaders()
            r = c.getresponse()
            return r.status, json.loads(r.read())
        finally:
            c.close()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


RESPONSES = {"/v1/classify": "ClassifyResponse", "/v1/embeddings": "EmbeddingsResponse",
             "/v1/rerank": "RerankResponse", "/v1/bundle": "BundleResponse", "/v1/decisions": "DecisionResponse",
             "/v1/systemone": "DecisionResponse"}
REQUESTS = {"/v1/classify": "ClassifyRequest", "/v1/embeddings": "EmbeddingsRequest", "/v1/rerank": "RerankRequest",
            "/v1/bundle": "BundleRequest", "/v1/decisions": "DecisionRequest", "/v1/systemone": "DecisionRequest"}


def post(server, path, body, status=200, code=None, valid_request=True):
    """POSTs body; checks the status, the error code, the schema of the answer and its Server-Timing."""
    what = f"POST {path} {json.dumps(body)[:120] if not isinstance(body, bytes) else body[:60]!r}"
    if valid_request and not isinstance(body, bytes):
        validate(body, REQUESTS[path], f"{what} (the request itself)")
    got, data, headers = server.request("POST", path, body)
    check(got == status, f"{what}: status {got} (wanted {status}) {data[:300]!r}")
    try:
        answer = json.loads(data)
    except ValueError:
        check(False, f"{what}: not JSON: {data[:200]!r}")
        return None
    if got == 200:
        validate(answer, RESPONSES[path], what)
    else:
        validate(answer, "ErrorResponse", what)
        if code:
            check(answer.get("error", {}).get("code") == code, f"{what}: code {answer.get('error')} (wanted {code})")
    timing = headers.get("server-timing", "")
    names = [part.split(";")[0].strip() for part in timing.split(",")] if timing else []
    check(names == PHASES, f"{what}: Server-Timing {timing!r}")
    durations = [float(part.split("dur=")[1]) for part in timing.split(",")] if names == PHASES else []
    check(all(d >= 0 for d in durations) and (not durations or durations[-1] >= max(durations[:-1]) - 1e-3),
          f"{what}: Server-Timing durations {durations}")
    return answer


def cli_json(*args):
    return json.loads(subprocess.run([CLI, *args, "--json"], check=True, capture_output=True, text=True).stdout)


def models_and_health(server):
    status, data, _ = server.request("GET", "/v1/models")
    models = json.loads(data)
    check(status == 200, "GET /v1/models")
    validate(models, "ModelList", "GET /v1/models")
    check(models["api_version"].split(".")[0] == "2", "api_version major 2")
    check(models["limits"] == {"max_bundle_tasks": 3, "max_request_bytes": 1048576}, f"limits {models['limits']}")
    cards = {c["id"]: c for c in models["data"]}
    check(set(cards) == {"domain", "pii", "encoder"}, f"cards {sorted(cards)}")
    check(cards["domain"]["surfaces"] == ["classify"] and cards["domain"]["heads"][0]["kind"] == "sequence", "domain card")
    check(cards["pii"]["heads"][0]["kind"] == "token", "pii card")
    check(cards["encoder"]["surfaces"] == ["embeddings"] and cards["encoder"]["embedding"]["dimensions"][0] == 256,
          "encoder card")
    for c in cards.values():
        check(len(c["model_sha256"]) == 64 and c["ready"] and c["status"] == "ready", f"{c['id']}: identity, ready")
    status, data, _ = server.request("GET", "/health")
    check(status == 200, "GET /health: 200 when every model is ready")
    health = json.loads(data)
    validate(health, "Health", "GET /health")
    check(set(health["models"]) == set(cards) and health["status"] == "ready", f"health {health}")
    status, data, headers = server.request("GET", "/openapi.yaml")
    document = yaml.safe_load(data) if status == 200 else {}
    check(status == 200 and headers.get("content-type", "").startswith("application/yaml") and
          document.get("openapi", "").startswith("3.") and document["info"]["version"] == models["api_version"] and
          all(p in document["paths"] for p in CONTRACT["paths"]), f"GET /openapi.yaml: {status}")
    status, data, _ = server.request("GET", "/health/live")
    check(status == 200, "GET /health/live")
    validate(json.loads(data), "Liveness", "GET /health/live")
    status, data, _ = server.request("POST", "/health")
    check(status == 405 and json.loads(data)["error"]["code"] == "invalid_request", f"POST /health: {status}")
    status, data, _ = server.request("GET", "/v1/nothing-here")
    check(status == 404, f"an unknown path: {status}")
    status, data, _ = server.request("GET", "/v1/classify")
    check(status == 405 and json.loads(data)["error"]["code"] == "invalid_request", f"GET /v1/classify: {status}")
    return cards


def classify_answers(server, cards):
    texts = ["What is the derivative of x^2 + 3x?", "Call me at 212-555-0187, David Kim.", "Ünïcödé — 日本語 Anna Berg"]
    want = cli_json("classify", f"{MODELS}/domain", *texts)["results"]
    got = post(server, "/v1/classify", {"model": "domain", "input": texts, "options": {"return_meta": True}})
    check(got["labels"] == cards["domain"]["heads"][0]["labels"] and got["kind"] == "sequence", "classify labels")
    for g, w in zip(got["results"], want):
        probs = dict(zip(got["labels"], g["probabilities"]))
        check(g["label"] == w["label"] and all(abs(probs[k] - v) <= 1e-6 for k, v in w["probabilities"].items()),
              f"classify {w['text']!r}: the CLI's answer")
    check(got["meta"]["model_sha256"] == cards["domain"]["model_sha256"] and got["meta"]["engine"] == "semroute", "meta")
    check(got["usage"]["input_tokens"] == sum(r["input"]["tokens"] for r in got["results"]), "usage")
    # Items in object form, pairs, and a malformed item beside good ones.
    got = post(server, "/v1/classify", {"model": "domain", "input": [{"text": texts[0]}, {"text": "a", "text_pair": "b"},
                                                                       {"text": 5}]}, valid_request=False)
    check([("error" in r) for r in got["results"]] == [False, False, True] and
          got["results"][2]["error"] == "invalid_input", "a malformed item fails alone")
    alone = post(server, "/v1/classify", {"model": "domain", "input": texts[0]})["results"][0]["probabilities"]
    check(max(abs(a - b) for a, b in zip(got["results"][0]["probabilities"], alone)) <= 1e-6,
          "an item in object form = the string (batched with others: to float rounding)")

    # Token spans in code points: the text between them is the span's text.
    entities = cli_json("tokens", f"{MODELS}/pii", *texts)["results"]
    got = post(server, "/v1/classify", {"model": "pii", "input": texts, "options": {"return_tokens": True}})
    for text, g, w in zip(texts, got["results"], entities):
        check([(s["label"], s["text"]) for s in g["spans"]] == [(e["type"], e["text"]) for e in w["entities"]],
              f"spans of {text!r}: the CLI's entities")
        for s in g["spans"]:
            check(text[s["start"]:s["end"]] == s["text"], f"span {s} of {text!r}: code-point offsets")
        check(all(abs(sum(t["probabilities"]) - 1) < 1e-4 for t in g["tokens"]) and len(g["tokens"]) > 0,
              f"return_tokens of {text!r}")
    high = post(server, "/v1/classify", {"model": "pii", "input": texts[1], "options": {"threshold": 1.0}})
    check(all(s["probability"] >= 1.0 for s in high["results"][0]["spans"]), "threshold filters spans")


def long_inputs(server):
    long_text = "word " * 400  # ~400 tokens: more than the models' 128
    got = post(server, "/v1/classify", {"model": "domain", "input": [long_text, "short"]})
    check(got["results"][0] == {"index": 0, "error": "max_length_exceeded"} and "label" in got["results"][1],
          f"reject (the default): an item alone fails {got['results'][0]}")
    got = post(server, "/v1/classify", {"model": "domain", "input": [long_text], "options": {"overflow": "truncate"}})
    r = got["results"][0]
    check(r["input"]["truncated"] and r["input"]["processed_tokens"] == 128 and r["input"]["tokens"] > 128,
          f"truncate: {r['input']}")
    got = post(server, "/v1/classify", {"model": "domain", "input": ["one two three four five six seven eight nine ten"],
                                        "options": {"overflow": "window", "max_tokens": 64,
                                                    "window": {"tokens": 6, "overlap": 1}}})
    r = got["results"][0]
    check(len(r["windows"]) == r["input"]["windows"] > 1 and r["windows"][-1]["end"] == r["input"]["tokens"] - 2,
          f"window: {r.get('input')} {r.get('windows', [])[:2]}")
    check(all(abs(max(w["probabilities"][i] for w in r["windows"]) - p) < 1e-6 for i, p in enumerate(r["probabilities"])),
          "window: each label's maximum over the windows")
    got = post(server, "/v1/classify", {"model": "domain", "input": [long_text],
                                        "options": {"overflow": "window", "max_tokens": 64, "window": {"tokens": 16}}})
    check(got["results"][0]["error"] == "scan_budget_exceeded", "window: over the scan budget, nothing read")
    got = post(server, "/v1/classify", {"model": "pii", "input": ["Anna Berg called " * 20 + "David Kim."],
                                        "options": {"overflow": "window", "window": {"tokens": 32, "overlap": 8}}})
    check(any(s["text"] == "David Kim" for s in got["results"][0]["spans"]), "token windows: a span in the last window")
    got = post(server, "/v1/classify", {"model": "domain", "input": "word " * 200000})  # ~1 MB, read as far as needed
    check(got["results"][0] == {"index": 0, "error": "max_length_exceeded"}, "a 1 MB input: rejected")
    post(server, "/v1/classify", {"model": "domain", "input": "x", "options": {"max_tokens": 4096}}, 400, "invalid_request")
    post(server, "/v1/classify", {"model": "domain", "input": "x", "options": {"overflow": "window"}}, 400,
         "invalid_request")


def embeddings(server, cards):
    texts = ["What is the derivative of x^2 + 3x?", "Ünïcödé — 日本語"]
    want = cli_json("embed", f"{MODELS}/multitask/base", *texts)["embeddings"]
    got = post(server, "/v1/embeddings", {"model": "encoder", "input": texts, "options": {"return_meta": True}})
    for d in got["data"]:
        check(max(abs(a - b) for a, b in zip(d["embedding"], want[d["index"]])) <= 1e-6, f"embedding {d['index']}")
    check(got["meta"]["representation"]["dimension"] == 256, "meta.representation")
    b64 = post(server, "/v1/embeddings", {"model": "encoder", "input": [{"type": "text", "text": texts[0]}],
                                          "encoding_format": "base64"})
    values = struct.unpack("<256f", base64.b64decode(b64["data"][0]["embedding"]))
    check(max(abs(a - b) for a, b in zip(values, want[0])) <= 1e-6, "base64: little-endian float32")
    got = post(server, "/v1/embeddings", {"model": "encoder", "input": ["word " * 400, "ok"]})
    check(got["data"][0]["error"] == "max_length_exceeded" and "embedding" in got["data"][1], "embeddings: reject alone")
    got = post(server, "/v1/embeddings", {"model": "encoder", "input": ["word " * 400],
                                          "options": {"overflow": "truncate"}})
    check(got["data"][0]["input"]["truncated"], "embeddings: truncate")
    post(server, "/v1/embeddings", {"model": "encoder", "input": "x", "dimensions": 100}, 400, "invalid_request")
    post(server, "/v1/embeddings", {"model": "encoder", "input": "x", "input_type": "query"}, 400, "invalid_request")
    post(server, "/v1/embeddings", {"model": "encoder", "input": [{"type": "image_url",
                                                                    "image_url": {"url": "data:image/png;base64,AA=="}}]},
         400, "invalid_request")
    post(server, "/v1/embeddings", {"model": "domain", "input": "x"}, 422, "unsupported_surface")


def bundles(server):
    got = post(server, "/v1/bundle", {"tasks": [
        {"id": "1", "classify": {"model": "domain", "input": "What is 2 + 2?"}},
        {"id": "2", "embeddings": {"model": "encoder", "input": "hi"}},
        {"id": "3", "classify": {"model": "nope", "input": "x"}}], "options": {"deadline_ms": 30000}})
    check([r["id"] for r in got["results"]] == ["1", "2", "3"], "bundle: task order")
    check([r["status"] for r in got["results"]] == [200, 200, 404], f"bundle statuses {got['results']}")
    check(got["results"][2]["error"]["code"] == "model_not_found", "bundle: a task's own error")
    post(server, "/v1/bundle", {"tasks": [{"id": str(i), "classify": {"model": "domain", "input": "x"}}
                                          for i in range(4)]}, 413, "request_too_large")
    post(server, "/v1/bundle", {"tasks": [{"id": "1"}]}, 400, "invalid_request", valid_request=False)


def errors(server):
    post(server, "/v1/classify", b"{not json", 400, "invalid_request")
    post(server, "/v1/classify", b'{"model": "domain", "input": "bad \xff"}', 400, "invalid_request")
    post(server, "/v1/classify", b'{"model": "domain", "input": "\\ud800 alone"}', 400, "invalid_request")
    post(server, "/v1/classify", b'{"model": "domain", "input": "x", "options": {"deadline_ms": NaN}}', 400,
         "invalid_request")
    post(server, "/v1/classify", b"[1, 2]", 400, "invalid_request")
    post(server, "/v1/classify", {"model": "domain", "input": "x", "colour": 1}, 400, "invalid_request", False)
    post(server, "/v1/classify", {"model": "domain", "input": "x", "options": {"colour": 1}}, 400, "invalid_request",
         False)
    post(server, "/v1/classify", {"model": "domain", "input": "x", "options": {"deadline_ms": 0}}, 400,
         "invalid_request", False)
    post(server, "/v1/classify", {"model": "domain", "input": "x", "options": {"profile": "fast"}}, 400,
         "invalid_request")
    post(server, "/v1/classify", {"model": "nope", "input": "x"}, 404, "model_not_found")
    post(server, "/v1/classify", {"input": "x"}, 400, "invalid_request")  # three models: name one
    post(server, "/v1/classify", {"model": "encoder", "input": "x"}, 422, "unsupported_surface")
    post(server, "/v1/classify", {"model": "domain", "input": "x", "head": "other"}, 400, "invalid_request")
    post(server, "/v1/classify", {"model": "domain", "input": ["x"] * 2049}, 400, "invalid_request")
    post(server, "/v1/classify", {"model": "domain", "input": []}, 400, "invalid_request", False)
    post(server, "/v1/rerank", {"model": "domain", "query": "q", "documents": ["d"]}, 422, "unsupported_surface")
    for path in ("/v1/decisions", "/v1/systemone"):
        post(server, path, {"model": "domain", "state": "s", "questions": {"q": {"type": "noul", "instructions": "?"}}},
             422, "unsupported_surface")
    got = post(server, "/v1/classify", {"model": "domain", "input": ["a", "b"], "options": {"deadline_ms": 0.001}})
    check(all(r.get("error") == "deadline_exceeded" for r in got["results"]), f"deadline_ms 0.001: {got['results']}")
    status, answer = server.announce("/v1/classify", 2 << 20)  # a body over max_request_bytes: refused unread
    check(status == 413 and answer["error"]["code"] == "request_too_large", f"a 2 MiB body: {status} {answer}")
    validate(answer, "ErrorResponse", "a 2 MiB body")


def scores_head(server, cards):
    """A scores head with its operating point: windows by default, per-label max, `selected` by its thresholds."""
    card = cards["scores"]["heads"][0]
    with open(os.path.join(PACKAGES["scores"], "operating_point.json"), "rb") as f:
        check(card["operating_point_sha256"] == hashlib.sha256(f.read()).hexdigest(), "operating_point_sha256")
    check(card["kind"] == "scores" and card["thresholds"] == [0.3, 0.5, 0.7] and card["overflow"] == "window" and
          card["window"] == {"tokens": 16, "overlap": 4}, f"scores card {card}")
    long_text = " ".join(["alpha", "beta", "gamma", "delta", "epsilon"] * 6)
    got = post(server, "/v1/classify", {"model": "scores", "input": [long_text, "short one"]})
    for r in got["results"]:
        check(len(r["windows"]) == r["input"]["windows"] >= 1, f"scores windows {r['input']}")
        maxima = [max(w["scores"][k] for w in r["windows"]) for k in range(3)]
        check(all(abs(a - b) < 1e-7 for a, b in zip(maxima, r["scores"])), "scores: each label's maximum over windows")
        want = [label for label, score, t in zip(got["labels"], r["scores"], [0.3, 0.5, 0.7]) if score >= t]
        check(r["selected"] == want, f"selected {r['selected']} (wanted {want})")
    check(len(got["results"][0]["windows"]) > 1, "a long text is read in several windows")
    want = cli_json("classify", PACKAGES["scores"], "short one")["results"][0]["probabilities"]
    got_short = dict(zip(got["labels"], got["results"][1]["scores"]))
    check(all(abs(got_short[k] - v) <= 1e-6 for k, v in want.items()), "scores: the CLI's sigmoids")
    got = post(server, "/v1/classify", {"model": "scores", "input": "word " * 80})
    check(got["results"][0]["error"] == "scan_budget_exceeded", "scores: over the document budget, nothing read")


def grounded_head(server, cards):
    """Answer spans recomputed from the per-token probabilities: runs of tokens above the threshold."""
    card = cards["halu"]["heads"][0]
    check(card["inputs"] == ["grounded"] and card["default_threshold"] == 0.5 and card["kind"] == "token",
          f"halu card {card}")
    check(cards["halu"]["limits"]["max_input_tokens"] == 96, "halu: the policy's budget")
    items = [{"context": "The Eiffel Tower is in Paris and was completed in 1889.",
              "question": "When was the Eiffel Tower completed?", "answer": "It was completed in 1889 in Rome, Ünïcode."},
             {"context": "Kyoto was the capital.", "answer": "Kyoto 京都 was the capital until 1869."}]
    first = post(server, "/v1/classify", {"model": "halu", "input": items, "options": {"return_tokens": True}})
    positives = sorted(t["probabilities"][1] for t in first["results"][0]["tokens"])
    just_below = positives[len(positives) // 2] - 1e-6  # a token just passes: a threshold applied otherwise shows
    for threshold in (None, 0.55, just_below):
        options = {"return_tokens": True, **({"threshold": threshold} if threshold else {})}
        got = post(server, "/v1/classify", {"model": "halu", "input": items, "options": options})
        for item, r in zip(items, got["results"]):
            t = threshold or 0.5
            runs, current = [], None
            for token in r["tokens"]:
                if token["end"] <= token["start"]:
                    continue
                p = token["probabilities"][1]
                if p > t:
                    current = [token["start"], token["end"], p] if current is None else \
                        [current[0], max(current[1], token["end"]), max(current[2], p)]
                elif current is not None:
                    runs.append(current)
                    current = None
            if current is not None:
                runs.append(current)
            check([(s["start"], s["end"]) for s in r["spans"]] == [(a, b) for a, b, _ in runs] and
                  all(abs(s["probability"] - p) < 1e-7 for s, (_, _, p) in zip(r["spans"], runs)),
                  f"grounded spans (threshold {t}) {r['spans']} vs {runs}")
            check(all(s["text"] == item["answer"][s["start"]:s["end"]] and s["label"] == "hallucinated"
                      for s in r["spans"]), "grounded spans: code points into the answer")
    long_context = {"context": "word " * 200, "question": "q", "answer": "It is so."}
    got = post(server, "/v1/classify", {"model": "halu", "input": [long_context]})
    check(got["results"][0]["error"] == "max_length_exceeded", "grounded: over the budget, rejected")
    got = post(server, "/v1/classify", {"model": "halu", "input": [long_context], "options": {"overflow": "truncate"}})
    r = got["results"][0]
    check(r["input"]["truncated"] and r["input"]["processed_tokens"] == 96, f"grounded truncate: {r.get('input')}")
    got = post(server, "/v1/classify", {"model": "halu", "input": ["a plain text", {"text": "x"}]}, valid_request=False)
    check(all(r.get("error") == "invalid_input" for r in got["results"]), "a grounded head reads grounded items only")
    post(server, "/v1/classify", {"model": "halu", "input": [items[0]], "options": {"overflow": "window"}}, 400,
         "invalid_request")


def rerank(server, cards):
    card = cards["reranker"]["rerank"]
    check(card["default"] == {"layer": 4, "dimension": 32} and {"layer": 1, "dimension": 16} in card["exits"],
          f"reranker card {card}")
    query, documents = "how do I reset my password", ["Open settings, then Reset.", "Lisbon is in Portugal.", "  ",
                                                      "Passwords reset by mail."]
    want = cli_json("rerank", PACKAGES["reranker"], query, *[d for d in documents if d.strip()])
    got = post(server, "/v1/rerank", {"model": "reranker", "query": query, "documents": documents,
                                      "return_documents": True, "options": {"return_meta": True}})
    results = got["results"]
    check([r["index"] for r in results] == sorted([0, 1, 3], key=lambda i: -next(
        x["logit"] for x in results if x["index"] == i)) + [2], f"rerank order {[r['index'] for r in results]}")
    check(results[-1] == {"index": 2, "error": "invalid_input"}, "a blank document fails alone")
    by_text = {d: i for i, d in enumerate(documents)}
    for r in results[:-1]:
        check(abs(r["relevance_score"] - 1 / (1 + math.exp(-r["logit"]))) < 1e-9 and r["document"] == documents[r["index"]],
              "relevance_score is the logit's sigmoid")
    check(len(want["ranked"]) == 3, "the CLI ranked the three documents")
    for cli in want["ranked"]:
        mine = next(r for r in results if r["index"] == by_text[cli["document"]])
        check(abs(cli["score"] - mine["logit"]) <= 1e-5, f"rerank {cli['document']!r}: the CLI's {cli['score']} vs {mine['logit']}")
    check(got["meta"]["pair_scorer"] == {"layer": 4, "dimension": 32}, "meta.pair_scorer")
    other = post(server, "/v1/rerank", {"model": "reranker", "query": query, "documents": documents[:2],
                                        "layer": 1, "dimensions": 16, "top_n": 1})
    check(len(other["results"]) == 1 and abs(other["results"][0]["logit"] - max(
        r["logit"] for r in results if r["index"] < 2)) > 1e-6, "another exit scores otherwise; top_n 1")
    post(server, "/v1/rerank", {"model": "reranker", "query": query, "documents": ["a"], "layer": 2}, 400,
         "invalid_request")
    post(server, "/v1/rerank", {"model": "reranker", "query": " ", "documents": ["a"]}, 400, "invalid_request")
    post(server, "/v1/rerank", {"model": "reranker", "query": query, "documents": ["a"],
                                "options": {"overflow": "truncate"}}, 400, "invalid_request")
    got = post(server, "/v1/rerank", {"model": "reranker", "query": query, "documents": ["word " * 40, "short"],
                                      "options": {"max_tokens": 24}})
    check([r.get("error") for r in got["results"]] == [None, "max_length_exceeded"], f"rerank budget {got['results']}")


def pooled_embedder(server, cards):
    card = cards["embedder"]["embedding"]
    check(card["input_types"] == ["document", "query"] and card["layers"] == [2, 4] and card["pooling"] == "mean" and
          card["normalized"], f"embedder card {card}")
    text = "solve for x"
    query = post(server, "/v1/embeddings", {"model": "embedder", "input": text, "input_type": "query"})
    prompted = post(server, "/v1/embeddings", {"model": "embedder", "input": "query: " + text})
    plain = post(server, "/v1/embeddings", {"model": "embedder", "input": text})
    check(max(abs(a - b) for a, b in zip(query["data"][0]["embedding"], prompted["data"][0]["embedding"])) < 1e-6,
          "input_type query: the package's prompt before the text")
    check(max(abs(a - b) for a, b in zip(query["data"][0]["embedding"], plain["data"][0]["embedding"])) > 1e-4,
          "the prompt changes the embedding")
    early = post(server, "/v1/embeddings", {"model": "embedder", "input": text, "layer": 2,
                                            "options": {"return_meta": True}})
    check(early["meta"]["representation"]["layer"] == 2 and abs(sum(v * v for v in early["data"][0]["embedding"]) - 1) < 1e-5,
          "layer 2: its own normalized vector")
    post(server, "/v1/embeddings", {"model": "embedder", "input": text, "layer": 3}, 400, "invalid_request")


def qwen3_embedding(server, cards, expected):
    """Qwen3-Embedding's layout: last-token pooling, normalized, its query instruction; Hugging Face's embeddings
    of the same token IDs (tests/data/qwen3_embedding/reference.json) within 1e-5, the texts in one batch."""
    card = cards["qwen3"]
    check(card["embedding"]["pooling"] == "lasttoken" and card["embedding"]["normalized"] and
          card["embedding"]["input_types"] == ["document", "query"] and card["embedding"]["dimensions"] == [64] and
          len(card["manifest_sha256"]) == 64, f"qwen3 card {card}")
    got = post(server, "/v1/embeddings", {"model": "qwen3", "input": [t for t, _ in expected]})
    for row, (text, want) in zip(got["data"], expected):
        error = max(abs(a - b) for a, b in zip(row["embedding"], want))
        check(error < 1e-5, f"qwen3 {text!r}: max abs error {error} against Hugging Face")
    instruction = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
    query = post(server, "/v1/embeddings", {"model": "qwen3", "input": "!*4", "input_type": "query"})
    prompted = post(server, "/v1/embeddings", {"model": "qwen3", "input": instruction + "!*4"})
    check(query["data"][0]["embedding"] == prompted["data"][0]["embedding"], "qwen3 query: its instruction first")


def close(a, b, tolerance):
    """Two answers agree: equal structure and strings, numbers within tolerance."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y, tolerance) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= tolerance
    return a == b


def metric(server, name):
    text = server.request("GET", "/metrics")[1].decode()
    return float(next(line.split()[-1] for line in text.splitlines() if line.startswith(name + " ")))


BOUND_HEADS = ["topic", "hazard", "entities"]
BOUND_TEXTS = ["Alice flew from Paris to Berlin on Monday.", "a short one", "word " * 200]


def bound_heads(server, cards):
    """Three heads on one backbone answer as each head joined to the backbone as a checkpoint of its own (1e-5);
    a bundle asking all three about one text equals the three calls alone; repeated items come from the cache."""
    card = cards["guard"]
    check([(h["name"], h["kind"]) for h in card["heads"]] == [("topic", "sequence"), ("hazard", "scores"),
                                                               ("entities", "token")], f"bound heads {card['heads']}")
    check(card["model_sha256"] not in [cards[n + "_alone"]["model_sha256"] for n in BOUND_HEADS],
          "a bound model's identity is its own")
    options = {"overflow": "truncate", "max_tokens": 64}
    for name in BOUND_HEADS:
        got = post(server, "/v1/classify", {"model": "guard", "head": name, "input": BOUND_TEXTS, "options": options})
        want = post(server, "/v1/classify", {"model": name + "_alone", "input": BOUND_TEXTS, "options": options})
        check(got["head"] == name and want["head"] == "default", f"head names {got['head']}, {want['head']}")
        check(close(got["results"], want["results"], 1e-5),
              f"head {name} on the shared backbone: {got['results']} (alone: {want['results']})")
    default = post(server, "/v1/classify", {"model": "guard", "input": "x", "options": options})
    check(default["head"] == "topic", "the first head is the primary")
    post(server, "/v1/classify", {"model": "guard", "head": "nope", "input": "x"}, 400, "invalid_request")
    text = "Bob met Carol in Rome."
    alone = {name: post(server, "/v1/classify", {"model": "guard", "head": name, "input": text, "options": options})
             for name in BOUND_HEADS}
    hits = metric(server, 'semroute_result_cache_total{outcome="hit"}')
    got = post(server, "/v1/bundle", {"tasks": [
        {"id": name, "classify": {"model": "guard", "head": name, "input": text, "options": options}}
        for name in BOUND_HEADS] + [{"id": "other", "classify": {"model": "guard", "head": "topic",
                                                               "input": ["never asked before", text]}}]})
    check([r["status"] for r in got["results"]] == [200] * 4, f"bundle of heads {got['results']}")
    for r in got["results"][:3]:
        check(r["classify"] == alone[r["id"]], f"bundle task {r['id']}: {r['classify']} (alone: {alone[r['id']]})")
    check(metric(server, 'semroute_result_cache_total{outcome="hit"}') == hits + 3,
          "the bundle's three repeated items came from the result cache, the new one did not")
    fresh = post(server, "/v1/classify", {"model": "guard", "head": "entities", "input": text,
                                          "options": dict(options, threshold=1.0)})
    check(fresh["results"][0]["spans"] == [], "options are part of the cache key: threshold 1 keeps no span")


def golden_and_manifest(workdir):
    """Reference answers recorded, then checked at load: matched; one changed: the model fails, /health 503."""
    values = {}
    server = Server(f"unix_socket: {workdir}/golden.sock\nmodels:\n  scores: {PACKAGES['scores']}\n", workdir, "golden")
    try:
        got = post(server, "/v1/classify", {"model": "scores", "input": [
            "Write a Python function that merges two sorted lists.",
            "Meine Telefonnummer ist 030 1234567 und ich wohne in Berlin."], "options": {"overflow": "truncate"}})
        for r in got["results"]:
            for k, v in enumerate(r["scores"]):
                values[f"{r['index']}.scores.{k}"] = v
    finally:
        server.stop()
    golden = os.path.join(PACKAGES["scores"], "golden_answers.json")
    runtime_packages.write_json(golden, {"answers": {"cpu": values}})
    runtime_packages.write_manifest(PACKAGES["scores"])
    server = Server(f"unix_socket: {workdir}/golden.sock\nmodels:\n  scores: {PACKAGES['scores']}\n", workdir, "golden")
    try:
        card = json.loads(server.request("GET", "/v1/models")[1])["data"][0]
        check(card["golden"] == {"status": "matched", "checked": 2 * len(values), "matched": 2 * len(values),
                                 "reference": "cpu"} and card["ready"], f"golden matched: {card['golden']}")
    finally:
        server.stop()
    values["0.scores.1"] += 0.01  # past the 1e-3 tolerance
    runtime_packages.write_json(golden, {"answers": {"cpu": values}})
    runtime_packages.write_manifest(PACKAGES["scores"])
    config = f"unix_socket: {workdir}/golden.sock\nmodels:\n  scores: {PACKAGES['scores']}\n  halu: {PACKAGES['halu']}\n"
    server = Server(config, workdir, "golden")
    try:
        status, data, _ = server.request("GET", "/health")
        health = json.loads(data)
        validate(health, "Health", "GET /health with a failed model")
        check(status == 503 and health["status"] == "degraded" and health["models"]["scores"]["status"] == "failed" and
              "golden" in health["models"]["scores"]["reason"], f"a golden miss: {status} {health}")
        models = json.loads(server.request("GET", "/v1/models")[1])
        validate(models, "ModelList", "GET /v1/models with a failed model")
        post(server, "/v1/classify", {"model": "scores", "input": "x"}, 503, "not_ready")
        post(server, "/v1/classify", {"model": "halu", "input": [{"answer": "x"}]})  # the other model still serves
    finally:
        server.stop()
    os.remove(golden)
    with open(os.path.join(PACKAGES["scores"], "config.json"), "a") as f:
        f.write("\n")  # one byte more than its manifest says
    server = Server(f"unix_socket: {workdir}/golden.sock\nmodels:\n  scores: {PACKAGES['scores']}\n", workdir, "golden")
    try:
        status, data, _ = server.request("GET", "/health")
        health = json.loads(data)
        check(status == 503 and health["status"] == "failed" and "manifest" in (health["reason"] or ""),
              f"a file that differs from its manifest: {status} {health}")
    finally:
        server.stop()


def managed_start(workdir):
    """The router's own start of a runtime: its models file (a local directory, a Hub id in the local cache,
    one found nowhere), its socket and limits on the command line."""
    revision = "0123456789abcdef0123456789abcdef01234567"
    cache = os.path.join(workdir, "hub")
    snapshot = os.path.join(cache, "models--vllm-sr--Tiny-Halu", "snapshots", revision)
    shutil.copytree(PACKAGES["halu"], snapshot)
    os.makedirs(os.path.join(cache, "models--vllm-sr--Tiny-Halu", "refs"), exist_ok=True)
    with open(os.path.join(cache, "models--vllm-sr--Tiny-Halu", "refs", "main"), "w") as f:
        f.write(revision)
    models = os.path.join(workdir, "models.json")
    runtime_packages.write_json(models, {"models": [
        {"model": os.path.join(MODELS, "domain"), "name": "vela-domain", "device": "auto", "profile": "exact"},
        {"model": "vllm-sr/Tiny-Halu", "revision": revision, "name": "vela-halu", "device": "cpu"},
        {"model": "vllm-sr/Not-Here", "name": "missing"},
        {"model": PACKAGES["reranker"], "name": "rr", "options": {"pair_scorer": {"layer": 1, "dimension": 16}}}]})
    os.chmod(models, 0o600)
    socket_path = os.path.join(workdir, "managed.sock")
    server = Server("", workdir, "managed", ["--models", models, "--uds", socket_path, "--max-request-bytes", "67108864",
                                             "--max-bundle-tasks", "1024", "--cache-dir", cache, "--threads", "2",
                                             "--offline"])
    try:
        listed = json.loads(server.request("GET", "/v1/models")[1])
        validate(listed, "ModelList", "GET /v1/models (managed start)")
        check(listed["limits"] == {"max_bundle_tasks": 1024, "max_request_bytes": 67108864}, f"limits {listed['limits']}")
        cards = {c["id"]: c for c in listed["data"]}
        check(cards["missing"]["status"] == "failed" and "cache" in cards["missing"]["reason"], "a model found nowhere")
        check(cards["rr"]["rerank"]["default"] == {"layer": 1, "dimension": 16}, "options.pair_scorer: the default exit")
        status, data, _ = server.request("GET", "/health")
        health = json.loads(data)
        check(status == 503 and health["status"] == "degraded" and health["models"]["vela-halu"]["status"] == "ready",
              f"managed health {status} {health}")
        got = post(server, "/v1/classify", {"model": "vela-domain", "input": [{"text": "What is 2 + 2?"}],
                                            "options": {"return_meta": True, "deadline_ms": 5000.5}})
        check(got["model"] == "vela-domain" and got["results"][0]["label"], "classify by the served name")
        post(server, "/v1/classify", {"model": "vela-halu", "input": [{"context": "c", "question": "q", "answer": "a b"}]})
        post(server, "/v1/classify", {"model": "missing", "input": "x"}, 503, "not_ready")
    finally:
        server.stop()
    bad = os.path.join(workdir, "bad-models.json")
    runtime_packages.write_json(bad, {"models": [{"model": MODELS, "name": "../x"}]})
    out = subprocess.run([CLI, "serve", "--models", bad, "--uds", socket_path], capture_output=True, text=True)
    check(out.returncode != 0 and "name" in out.stderr, f"a malformed models file: {out.returncode} {out.stderr[:200]}")


def main():
    workdir = tempfile.mkdtemp(prefix="semroute-contract-")
    config = f"""unix_socket: {workdir}/runtime.sock
limits: {{max_body_bytes: 1048576, max_bundle_tasks: 3}}
models:
  domain: {{path: {MODELS}/domain, max_batch: 8, max_wait_us: 500}}
  pii: {MODELS}/pii
  encoder: {{path: {MODELS}/multitask/base, task: embedding}}
"""
    global PACKAGES
    PACKAGES = runtime_packages.make_packages(CLI, REPO, os.path.join(workdir, "packages"))
    PACKAGES["qwen3"], qwen3_expected = runtime_packages.make_qwen3_embedding(REPO, os.path.join(workdir, "qwen3"))
    server = Server(config, workdir)
    try:
        cards = models_and_health(server)
        classify_answers(server, cards)
        long_inputs(server)
        embeddings(server, cards)
        bundles(server)
        errors(server)
        status, _, _ = server.request("GET", "/health")
        check(status == 200 and server.proc.poll() is None, "the server is still ready after all of it")
    finally:
        server.stop()
    config = f"unix_socket: {workdir}/packages.sock\nmodels:\n" + "".join(
        f"  {name}: {path}\n" for name, path in PACKAGES.items())
    server = Server(config, workdir, "packages")
    try:
        models = json.loads(server.request("GET", "/v1/models")[1])
        validate(models, "ModelList", "GET /v1/models (upstream's layouts)")
        cards = {c["id"]: c for c in models["data"]}
        scores_head(server, cards)
        grounded_head(server, cards)
        rerank(server, cards)
        pooled_embedder(server, cards)
        qwen3_embedding(server, cards, qwen3_expected)
    finally:
        server.stop()
    bound, alone = runtime_packages.make_bound_heads(CLI, REPO, os.path.join(workdir, "bound"))
    config = (f"unix_socket: {workdir}/bound.sock\nmodels:\n  guard:\n    path: {bound['backbone']}\n"
              "    max_batch: 8\n    heads:\n" + "".join(f"      {n}: {bound['heads'][n]}\n" for n in BOUND_HEADS) +
              "".join(f"  {n}_alone: {alone[n]}\n" for n in BOUND_HEADS))
    server = Server(config, workdir, "bound")
    try:
        models = json.loads(server.request("GET", "/v1/models")[1])
        validate(models, "ModelList", "GET /v1/models (bound heads)")
        bound_heads(server, {c["id"]: c for c in models["data"]})
    finally:
        server.stop()
    golden_and_manifest(workdir)
    managed_start(workdir)
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("contract: every answer valid")


if __name__ == "__main__":
    main()
