"""The vLLM Semantic Router's model runtime contract in process
(semroute_runtime_*, docs/runtime.md): the JSON requests and answers of
`semroute serve`'s /v1/classify, /v1/embeddings, /v1/rerank, /v1/bundle,
/v1/decisions, /v1/models and /health, without a server.

    with semroute.Runtime() as runtime:
        runtime.add_model("domain", "models/domain")
        status, answer = runtime.call("/v1/classify", {"model": "domain", "input": "What is 2 + 2?"})
"""

from __future__ import annotations

import ctypes as C
import json
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import errors
from ._handle import Handle, out_handle, utf8
from ._lib import check, cstr, lib
from .model import model_params

Body = Union[Mapping[str, Any], str, bytes, None]


class Runtime(Handle):
    """Models served under the runtime contract; call() is thread-safe."""

    def __init__(self, max_bundle_tasks: int = 0, max_queue: int = 0):
        out = out_handle()
        check(lib.semroute_runtime_create(max_bundle_tasks, max_queue, C.byref(out)))
        super().__init__(out, lib.semroute_runtime_free)

    def add_model(self, name: str, path: str, **params) -> None:
        """A model directory under `name` (params as semroute.Model: device, dtype, max_batch, …). A model
        whose files differ from its manifest or whose golden answers miss is added as failed (see models())."""
        p = model_params(**params)
        self._call(lambda h: check(lib.semroute_runtime_add_model(h, utf8(name), utf8(str(path)), C.byref(p))))

    def add_heads(self, name: str, backbone: str, heads: Mapping[str, str], **params) -> None:
        """One task model of heads bound to the encoder in `backbone`: {head name: task directory}, the first
        the primary; one forward serves every head (params as add_model)."""
        if not heads:
            raise errors.InvalidArgument("add_heads: no heads")
        p = model_params(**params)
        names = (C.c_char_p * len(heads))(*[utf8(n) for n in heads])
        dirs = (C.c_char_p * len(heads))(*[utf8(str(d)) for d in heads.values()])
        self._call(lambda h: check(lib.semroute_runtime_add_heads(h, utf8(name), utf8(str(backbone)), len(heads),
                                                                   names, dirs, C.byref(p))))

    def call(self, path: str, body: Body = None, method: Optional[str] = None) -> Tuple[int, Dict[str, Any]]:
        """(HTTP status, the JSON answer) of one request; POST with a body, else GET."""
        if body is None:
            data = b""
        elif isinstance(body, (str, bytes)):
            data = utf8(body)
        else:
            try:
                data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
            except (TypeError, ValueError) as e:
                raise errors.InvalidArgument(f"not JSON-serializable: {e}") from None
        verb = method or ("POST" if body is not None else "GET")

        def run(h):
            out = out_handle()
            check(lib.semroute_runtime_call(h, utf8(verb), utf8(path), data or None, len(data), C.byref(out)))
            try:
                length = C.c_size_t()
                raw = C.string_at(lib.semroute_runtime_reply_body(out, C.byref(length)), length.value)
                self.last_server_timing = cstr(lib.semroute_runtime_reply_server_timing(out))
                return int(lib.semroute_runtime_reply_status(out)), json.loads(raw)
            finally:
                lib.semroute_runtime_reply_free(out)
        return self._call(run)

    def decide(self, model: str, state: Any, questions: Mapping[str, Any], **options) -> Dict[str, Any]:
        """A decision model's answers (POST /v1/decisions, docs/decisions.md): `questions` {id: question} about
        `state` (text, an object of typed parts, or an array); `options` as the request's (deadline_ms,
        max_tokens, return_meta). The response; a refused request raises (400 InvalidArgument, 404 NotFound,
        else Unsupported or Internal, with the contract's code and message)."""
        body: Dict[str, Any] = {"model": model, "state": state, "questions": dict(questions)}
        if options:
            body["options"] = options
        status, answer = self.call("/v1/decisions", body)
        if status != 200:
            error = answer.get("error", {})
            kind = {400: errors.InvalidArgument, 404: errors.NotFound, 422: errors.Unsupported}.get(status, errors.Internal)
            raise kind(f"{error.get('code', status)}: {error.get('message', '')}")
        return answer

    def models(self) -> Dict[str, Any]:
        return self.call("/v1/models")[1]

    def health(self) -> Tuple[int, Dict[str, Any]]:
        return self.call("/health")
