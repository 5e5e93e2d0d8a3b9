"""Hallucination detection (semroute_halluc_*): unsupported spans of an LLM
answer against its context, for a whole answer or sentence by sentence as a
stream arrives."""

from __future__ import annotations

import ctypes as C
import dataclasses
import threading
from typing import List, Optional

from . import _lib, errors
from ._handle import Handle, Text, out_handle, utf8
from ._lib import check, cstr, lib
from .model import model_params

EVENTS = {0: "ok", 1: "warn", 2: "stop"}
SEVERITIES = ("low", "low-medium", "medium", "high", "critical")


@dataclasses.dataclass(frozen=True)
class Span:
    """An unsupported span: UTF-8 bytes of the answer, its score, the NLI
    model's verdict ("" without one) and a severity 0 (low) .. 4 (critical)."""
    byte_start: int
    byte_end: int
    score: float
    nli_label: str
    entailment: float
    neutral: float
    contradiction: float
    severity: int

    @property
    def severity_name(self) -> str:
        """"low", "low-medium", "medium", "high" or "critical"."""
        return SEVERITIES[self.severity] if 0 <= self.severity < len(SEVERITIES) else str(self.severity)


@dataclasses.dataclass(frozen=True)
class Sentence:
    """A judged sentence of the answer: event "ok", "warn" or "stop"."""
    byte_start: int
    byte_end: int
    event: str
    max_score: float
    latency_ms: float
    spans: List[Span]


def _sentences(result) -> List[Sentence]:
    try:
        sentences = []
        for i in range(lib.semroute_halluc_result_count(result)):
            s = lib.semroute_halluc_result_sentence(result, i).contents
            spans = [Span(int(p.begin), int(p.end), float(p.score), cstr(p.nli_label), float(p.entailment),
                          float(p.neutral), float(p.contradiction), int(p.severity))
                     for p in (s.spans[k].contents for k in range(s.span_count))]
            sentences.append(Sentence(int(s.begin), int(s.end), EVENTS.get(s.event, str(s.event)),
                                      float(s.max_score), float(s.latency_ms), spans))
        return sentences
    finally:
        lib.semroute_halluc_result_free(result)


class AnswerStream(Handle):
    """Answer chunks checked as they arrive (one caller at a time: calls are
    serialized). feed() returns the sentences a chunk completes; finish() the
    last one. A malformed chunk fails the stream for good."""

    def __init__(self, ptr):
        super().__init__(ptr, lib.semroute_halluc_stream_free)
        self._serial = threading.Lock()

    def feed(self, chunk: Text) -> List[Sentence]:
        data = utf8(chunk)
        return self._judged(lambda h, out: lib.semroute_halluc_stream_feed(h, data, len(data), C.byref(out)))

    def finish(self) -> List[Sentence]:
        return self._judged(lambda h, out: lib.semroute_halluc_stream_finish(h, C.byref(out)))

    def _judged(self, call) -> List[Sentence]:
        def run(h):
            with self._serial:
                out = out_handle()
                check(call(h, out))
                return _sentences(out)
        return self._call(run)


class HallucinationDetector(Handle):
    """A LettuceDetect-style token classifier (labels supported /
    hallucinated), optionally with an NLI model explaining each span.
    Options: the C API's semroute_halluc_params fields (threshold,
    min_span_words, context_windows, nli_filter, ...) and model: a dict of
    Model load options for both models."""

    def __init__(self, detector_model: str, nli_model: Optional[str] = None, input_template: Optional[str] = None,
                 model: Optional[dict] = None, **options):
        params = lib.semroute_halluc_default_params()
        params.struct_size = C.sizeof(_lib.HallucParams)
        keep = []
        for name, value in (("nli_model", nli_model), ("input_template", input_template)):
            if value is not None:
                keep.append(utf8(str(value)))
                setattr(params, name, keep[-1])
        for name, value in options.items():
            if name in ("struct_size", "model") or name not in dict(_lib.HallucParams._fields_):
                raise errors.InvalidArgument(f"unknown detector option {name!r}")
            setattr(params, name, value)
        loaded = model_params(**(model or {}))
        params.model = C.pointer(loaded)
        out = out_handle()
        check(lib.semroute_halluc_load(utf8(str(detector_model)), C.byref(params), C.byref(out)))
        super().__init__(out, lib.semroute_halluc_free)

    def detect(self, context: Text, answer: Text, question: Text = "") -> List[Sentence]:
        """Every sentence of a whole answer, judged against the context."""
        c, q, a = utf8(context), utf8(question), utf8(answer)

        def run(h):
            out = out_handle()
            check(lib.semroute_halluc_detect(h, c, len(c), q, len(q), a, len(a), C.byref(out)))
            return _sentences(out)
        return self._call(run)

    def stream(self, context: Text, question: Text = "", sse: bool = False, stop_severity: int = 0) -> AnswerStream:
        """A stream of answer chunks (sse=True: the raw bytes of an OpenAI SSE
        stream); stop_severity > 0 ends it at a span that severe."""
        c, q = utf8(context), utf8(question)

        def run(h):
            out = out_handle()
            check(lib.semroute_halluc_stream_open(h, c, len(c), q, len(q), int(sse), stop_severity, C.byref(out)))
            return AnswerStream(out)
        return self._call(run)
