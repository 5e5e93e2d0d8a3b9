"""The `semroute serve` sidecar from Python, with the standard library only
(http.client over TCP or a Unix socket). Its handles answer with the same
types as the in-process ones (Classification, Entity, TaskAnswer, Route
fields), so code switches between them by configuration:

    models = semroute.Client("unix:///run/semroute.sock") if sidecar else None
    domain = models.model("domain") if models else semroute.Model("models/domain")
    print(domain.classify("What is 2 + 2?").label)

Safe to share between threads (one connection per call)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.parse
from typing import Any, Dict, List, Mapping, Optional, Sequence

from . import errors
from ._handle import Text
from .hallucination import SEVERITIES, Sentence, Span
from .model import Classification, Entity, InputUsage, TokenLabel, TokenResult
from .multitask import TaskAnswer

_CODES = {c.name.lower(): c for c in errors.Code}
# The model runtime contract's request errors (its /v1/classify and /v1/embeddings).
_CODES.update({"invalid_request": errors.Code.INVALID_ARGUMENT, "model_not_found": errors.Code.NOT_FOUND,
               "request_too_large": errors.Code.TOO_LONG, "unsupported_surface": errors.Code.UNSUPPORTED,
               "internal_error": errors.Code.INTERNAL})


class Busy(errors.Error):
    """The sidecar's queue for a model is full (HTTP 429): retry shortly."""


class DeadlineExceeded(errors.Error):
    """The sidecar gave up on the request: it still waited for its model when
    the client's timeout (sent as x-semroute-timeout-ms) ran out (HTTP 504)."""


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


class Client:
    """Client("http://127.0.0.1:8080") or Client("unix:///run/semroute.sock"),
    token: the server's bearer token, timeout: seconds per request."""

    def __init__(self, address: str, token: Optional[str] = None, timeout: float = 30.0):
        self._token, self._timeout = token, timeout
        if address.startswith("unix://"):
            self._unix, self._host, self._port = address[len("unix://"):], None, None
        elif address.startswith("http://"):
            parsed = urllib.parse.urlparse(address)
            self._unix, self._host, self._port = None, parsed.hostname, parsed.port or 80
        else:
            raise errors.InvalidArgument(f"address must be http://host:port or unix:///path, not {address!r}")

    def _connection(self) -> http.client.HTTPConnection:
        if self._unix:
            return _UnixConnection(self._unix, self._timeout)
        return http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)

    def call(self, method: str, path: str, body: Any = None, headers: Optional[Dict[str, str]] = None) -> Any:
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode("utf-8")
        sent = {"Content-Type": "application/json",
                "x-semroute-timeout-ms": str(max(1, min(3_600_000, int(self._timeout * 1000)))), **(headers or {})}
        if self._token:
            sent["Authorization"] = f"Bearer {self._token}"
        connection = self._connection()
        try:
            connection.request(method, path, body=data, headers=sent)
            response = connection.getresponse()
            payload = response.read()
        finally:
            connection.close()
        if response.status // 100 != 2:
            _raise(response.status, payload)
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            return payload
        return json.loads(payload)

    def ready(self) -> Dict[str, Any]:
        return self.call("GET", "/ready")

    def model(self, name: str) -> "RemoteModel":
        return RemoteModel(self, name)

    def unified(self, name: str) -> "RemoteUnified":
        return RemoteUnified(self, name)

    def router(self, name: str = "") -> "RemoteRouter":
        return RemoteRouter(self, name)

    def detector(self, name: str) -> "RemoteDetector":
        return RemoteDetector(self, name)


def _raise(status: int, payload: bytes):
    try:
        error = json.loads(payload)["error"]
        code, message = error.get("code", ""), error.get("message", "")
    except (ValueError, KeyError, TypeError):
        code, message = "", payload[:200].decode("utf-8", "replace")
    if status == 429:
        raise Busy(message, errors.Code.INTERNAL)
    if status == 504:
        raise DeadlineExceeded(message, errors.Code.INTERNAL)
    if code in _CODES:
        errors.raise_for(int(_CODES[code]), message)
    raise errors.Error(f"HTTP {status} {code}: {message}", errors.Code.INTERNAL)


def _text(value: Text) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _usage(u: Mapping[str, Any]) -> InputUsage:
    return InputUsage(int(u["input_tokens"]), int(u["processed_tokens"]), bool(u["truncated"]))


def _contract_usage(u: Mapping[str, Any]) -> InputUsage:
    """The runtime contract's InputUsage: a cut input's count is a lower bound, reported as 0 (not counted)."""
    return InputUsage(0 if u.get("tokens_lower_bound") else int(u["tokens"]), int(u["processed_tokens"]),
                      bool(u["truncated"]))


def _raise_item(index: int, item: Mapping[str, Any]):
    """An item error of the runtime contract, as the in-process call raises it."""
    name = item.get("error")
    if not name:
        return
    message = f"text {index}: {name}"
    if name == "deadline_exceeded":
        raise DeadlineExceeded(message, errors.Code.INTERNAL)
    code = {"max_length_exceeded": errors.Code.TOO_LONG, "scan_budget_exceeded": errors.Code.TOO_LONG,
            "invalid_input": errors.Code.INVALID_ARGUMENT}.get(name, errors.Code.INTERNAL)
    errors.raise_for(int(code), message)


def _entity(e: Mapping[str, Any], source: str) -> Entity:
    encoded = source.encode("utf-8")
    start = len(encoded[:e["begin"]].decode("utf-8", "replace"))
    end = len(encoded[:e["end"]].decode("utf-8", "replace"))
    return Entity(e["type"], start, end, e["text"], float(e["score"]), int(e["begin"]), int(e["end"]))


class RemoteModel:
    """A served model: classify, entities, embed, similarity, as Model."""

    def __init__(self, client: Client, name: str):
        self._client, self.name = client, name

    def _texts(self, path: str, texts: Sequence[Text]) -> Dict[str, Any]:
        return self._client.call("POST", path, {"model": self.name, "input": [_text(t) for t in texts]})

    def classify(self, text: Text) -> Classification:
        return self.classify_batch([text])[0]

    def _contract(self, path: str, texts: Sequence[Text], **fields) -> Dict[str, Any]:
        """A runtime contract surface; texts cut to the model's limit as in process (overflow truncate)."""
        body = {"model": self.name, "input": [_text(t) for t in texts], "options": {"overflow": "truncate"}, **fields}
        return self._client.call("POST", path, body)

    def classify_batch(self, texts: Sequence[Text]) -> List[Classification]:
        reply = self._contract("/v1/classify", texts)
        if reply["kind"] not in ("sequence", "scores"):
            raise errors.InvalidArgument(f"model {self.name!r} is not a sequence classifier ({reply['kind']})")
        labels, out = reply["labels"], []
        for i, r in enumerate(reply["results"]):
            _raise_item(i, r)
            probabilities = [float(p) for p in r["probabilities" if reply["kind"] == "sequence" else "scores"]]
            best = probabilities.index(max(probabilities))  # the first of equal maxima, as in process
            out.append(Classification(labels[best], best, probabilities[best], dict(zip(labels, probabilities)),
                                      _contract_usage(r["input"])))
        return out

    def entities(self, text: Text) -> List[Entity]:
        return self.token_classify_batch([text])[0].entities

    def entities_batch(self, texts: Sequence[Text]) -> List[List[Entity]]:
        return [r.entities for r in self.token_classify_batch(texts)]

    def token_classify_batch(self, texts: Sequence[Text]) -> List[TokenResult]:
        reply = self._texts("/v1/tokens", texts)
        label_ids = {label: i for i, label in enumerate(reply["labels"])}
        results = []
        for source, r in zip(texts, reply["results"]):
            tokens = [TokenLabel(int(t["id"]), t["label"], label_ids.get(t["label"], -1), float(t["probability"]),
                                 int(t["begin"]), int(t["end"])) for t in r["tokens"]]
            results.append(TokenResult([_entity(e, _text(source)) for e in r["entities"]], tokens, _usage(r["input"])))
        return results

    def embed(self, text: Text, dimension: int = 0):
        return self.embed_batch([text], dimension=dimension)[0]

    def embed_batch(self, texts: Sequence[Text], dimension: int = 0):
        rows = sorted(self._contract("/v1/embeddings", texts, **({"dimensions": dimension} if dimension else {}))["data"],
                      key=lambda d: d["index"])
        for d in rows:
            _raise_item(d["index"], d)
        vectors = [d["embedding"] for d in rows]
        try:
            import numpy
            return numpy.asarray(vectors, dtype=numpy.float32)
        except ImportError:  # pragma: no cover - depends on the environment
            return vectors

    def similarity(self, a: Text, b: Text) -> float:
        reply = self._client.call("POST", "/v1/similarity", {"model": self.name, "a": _text(a), "b": _text(b)})
        return float(reply["similarity"])


class RemoteUnified:
    """A served unified classifier: classify / classify_batch as Unified."""

    def __init__(self, client: Client, name: str):
        self._client, self.name = client, name

    def classify(self, text: Text, tasks: Optional[Sequence[str]] = None) -> Dict[str, TaskAnswer]:
        return self.classify_batch([text], tasks)[0]

    def classify_batch(self, texts: Sequence[Text], tasks: Optional[Sequence[str]] = None,
                       prefer_accuracy: bool = False) -> List[Dict[str, TaskAnswer]]:
        body: Dict[str, Any] = {"model": self.name, "input": [_text(t) for t in texts],
                                "prefer_accuracy": prefer_accuracy}
        if tasks is not None:
            body["tasks"] = list(tasks)
        out = []
        for source, r in zip(texts, self._client.call("POST", "/v1/unified", body)["results"]):
            answers = {}
            for t in r["tasks"]:
                sequence = "label" in t
                answers[t["task"]] = TaskAnswer(
                    task=t["task"], kind="sequence" if sequence else "token", path=t["path"], reason=t["reason"],
                    latency_ms=float(t["latency_ms"]), error=t.get("error"),
                    error_code=int(_CODES[t["error_code"]]) if t.get("error_code") in _CODES else 0,
                    label=t.get("label", ""), confidence=float(t.get("confidence", 0.0)),
                    probabilities=list(t.get("probabilities", {}).values()), risk=float(t.get("risk", 0.0)),
                    flagged=bool(t.get("flagged", False)),
                    entities=[_entity(e, _text(source)) for e in t.get("entities", [])])
            out.append(answers)
        return out


class RemoteRoute:
    """A routing answer from the sidecar, with Route's fields."""

    def __init__(self, reply: Dict[str, Any]):
        self.decision: str = reply["decision"]
        self.confidence: float = float(reply.get("confidence", 0.0))
        self.blocked: bool = bool(reply.get("blocked", False))
        self.model: str = reply.get("model", "")
        self.cache_hit: bool = reply.get("cache") == "hit"
        self.check_answer: bool = bool(reply.get("check_answer", False))
        self.request: Dict[str, Any] = reply.get("request", {})
        self.response: Optional[Dict[str, Any]] = reply.get("response")
        self.headers: Dict[str, str] = reply.get("headers", {})
        self.trace: Dict[str, Any] = reply
        self.route_id: Optional[str] = reply.get("route_id")


class RemoteRouter:
    """A served router: route / store_answer as Router."""

    def __init__(self, client: Client, name: str = ""):
        self._client, self.name = client, name

    def route(self, request: Any, metadata: Optional[Mapping[str, str]] = None) -> RemoteRoute:
        body = request if isinstance(request, bytes) else (request.encode("utf-8") if isinstance(request, str)
                                                           else json.dumps(request).encode("utf-8"))
        headers = {"x-semroute-metadata": json.dumps(dict(metadata))} if metadata else None
        path = "/v1/route" + (f"?router={urllib.parse.quote(self.name)}" if self.name else "")
        return RemoteRoute(self._client.call("POST", path, body, headers))

    def store_answer(self, route: RemoteRoute, answer: Any) -> bool:
        if not route.route_id:
            return False
        response = json.loads(answer) if isinstance(answer, (str, bytes)) else answer
        return bool(self._client.call("POST", "/v1/route/answer",
                                      {"route_id": route.route_id, "response": response})["stored"])


def _sentence(e: Mapping[str, Any]) -> Sentence:
    spans = [Span(int(p["begin"]), int(p["end"]), float(p["score"]), p.get("nli", {}).get("label", ""),
                  float(p.get("nli", {}).get("entailment", 0)), float(p.get("nli", {}).get("neutral", 0)),
                  float(p.get("nli", {}).get("contradiction", 0)), SEVERITIES.index(p["severity"]))
             for p in e["spans"]]
    return Sentence(int(e["begin"]), int(e["end"]), e["event"], float(e["max_score"]), float(e["latency_ms"]), spans)


class RemoteAnswerStream:
    """An answer stream living on the sidecar, as HallucinationDetector.stream()'s
    AnswerStream: feed() returns the sentences a chunk completes, finish() the
    last one; close() (or leaving a with block) ends it there."""

    def __init__(self, client: Client, path: str):
        self._client, self._path, self._ended = client, path, False
        self._serial = threading.Lock()

    def feed(self, chunk: Text) -> List[Sentence]:
        with self._serial:
            if self._ended:
                raise errors.Closed("the stream has ended")
            data = chunk.encode("utf-8") if isinstance(chunk, str) else bytes(chunk)
            return [_sentence(e) for e in self._client.call("POST", self._path, data)["events"]]

    def finish(self) -> List[Sentence]:
        with self._serial:
            if self._ended:
                raise errors.Closed("the stream has ended")
            self._ended = True
            return [_sentence(e) for e in self._client.call("DELETE", self._path)["events"]]

    def close(self) -> None:
        with self._serial:
            if not self._ended:
                self._ended = True
                try:
                    self._client.call("DELETE", self._path)
                except errors.Error:
                    pass  # already gone (idle, or ended by an error)

    def __enter__(self) -> "RemoteAnswerStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class RemoteDetector:
    """A hallucination detector served by the sidecar (/v1/check-answer), with
    HallucinationDetector's detect() and stream()."""

    def __init__(self, client: Client, name: str):
        self._client, self._name = client, name

    def detect(self, context: Text, answer: Text, question: Text = "") -> List[Sentence]:
        body = self._client.call("POST", "/v1/check-answer", {"detector": self._name, "context": _text(context),
                                                              "question": _text(question), "answer": _text(answer)})
        sentences = []
        for block in body.decode("utf-8").split("\n\n"):
            if block and not block.startswith("event: done"):
                sentences.append(_sentence(json.loads(block.split("\n", 1)[1][len("data: "):])))
        return sentences

    def stream(self, context: Text, question: Text = "", sse: bool = False, stop_severity: int = 0) -> RemoteAnswerStream:
        request = {"detector": self._name, "context": _text(context), "question": _text(question),
                   "format": "sse" if sse else "text"}
        if stop_severity > 0:
            request["stop_at"] = str(stop_severity)
        opened = self._client.call("POST", "/v1/check-answer/streams", request)
        return RemoteAnswerStream(self._client, "/v1/check-answer/streams/" + opened["stream"])
