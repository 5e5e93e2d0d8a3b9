"""The router (semroute_router_*): an OpenAI chat request in, the decision,
the rewritten request and headers out; the semantic cache; answer checks."""

from __future__ import annotations

import ctypes as C
import json
from typing import Any, Dict, Mapping, Optional, Union

from . import errors
from ._handle import Handle, Text, out_handle, utf8
from ._lib import check, cstr, lib
from .hallucination import AnswerStream

Request = Union[Mapping[str, Any], str, bytes]


def _json_bytes(value: Request) -> bytes:
    if isinstance(value, (str, bytes)):
        return utf8(value)
    try:
        return json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgument(f"not JSON-serializable: {e}") from None


class Route(Handle):
    """A routing answer. Its fields are read at once; the handle stays open
    for Router.store_answer / Router.check_answer (close it, or use `with`)."""

    def __init__(self, ptr):
        super().__init__(ptr, lib.semroute_route_free)
        h = ptr
        self.decision: str = cstr(lib.semroute_route_decision(h))
        self.confidence: float = float(lib.semroute_route_confidence(h))
        self.blocked: bool = bool(lib.semroute_route_blocked(h))
        self.model: str = cstr(lib.semroute_route_model(h))
        self.cache_hit: bool = bool(lib.semroute_route_cache_hit(h))
        self.check_answer: bool = bool(lib.semroute_route_check_answer(h))
        self.request: Dict[str, Any] = json.loads(cstr(lib.semroute_route_request_json(h)))
        response = lib.semroute_route_response_json(h)
        self.response: Optional[Dict[str, Any]] = json.loads(cstr(response)) if response else None
        self.headers: Dict[str, str] = {cstr(lib.semroute_route_header_name(h, i)):
                                        cstr(lib.semroute_route_header_value(h, i))
                                        for i in range(lib.semroute_route_header_count(h))}
        self.trace: Dict[str, Any] = json.loads(cstr(lib.semroute_route_json(h)))

    def __repr__(self) -> str:
        return f"<semroute.Route {self.decision!r} model={self.model!r} blocked={self.blocked}>"


class Router(Handle):
    """A router config (YAML) loaded once; route() is thread-safe.

        with semroute.Router("examples/router/router.yaml") as router:
            route = router.route({"model": "auto", "messages": [{"role": "user", "content": "Hi"}]})
            print(route.decision, route.model, route.headers)
    """

    def __init__(self, config_path: str):
        out = out_handle()
        check(lib.semroute_router_load(utf8(str(config_path)), C.byref(out)))
        super().__init__(out, lib.semroute_router_free)

    def route(self, request: Request, metadata: Optional[Mapping[str, str]] = None) -> Route:
        """request: a chat-completions request (dict or JSON text); metadata:
        string values the conditions see as meta.<key>."""
        body = _json_bytes(request)
        meta = _json_bytes(metadata) if metadata is not None else None

        def run(h):
            out = out_handle()
            check(lib.semroute_router_route(h, body, len(body), meta, len(meta) if meta else 0, C.byref(out)))
            return Route(out)
        return self._call(run)

    def store_answer(self, route: Route, answer: Request) -> bool:
        """After a cache miss: stores the model's chat.completion for similar
        prompts. False when the route had nothing to store."""
        body = _json_bytes(answer)
        stored = C.c_int()
        self._call(lambda h: route._call(lambda r: check(
            lib.semroute_router_store_answer(h, r, body, len(body), C.byref(stored)))))
        return bool(stored.value)

    def check_answer(self, route: Route, context: Text = "", sse: bool = True) -> AnswerStream:
        """A stream checking the model's answer to a routed request against
        context (or, when empty, the request's tool messages)."""
        data = utf8(context)

        def run(h):
            out = out_handle()
            route._call(lambda r: check(lib.semroute_router_check_answer(h, r, data, len(data), int(sse),
                                                                         C.byref(out))))
            return AnswerStream(out)
        return self._call(run)
