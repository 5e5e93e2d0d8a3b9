"""A loaded model: classification, entities, embeddings, similarity, top-k,
pair scoring, tokenization (the C API's semroute_model_*)."""

from __future__ import annotations

import ctypes as C
import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

from . import _lib, errors
from ._handle import Handle, Packed, Text, as_list, char_offset, out_handle, utf8
from ._lib import check, cstr, lib

try:  # numpy arrays for embeddings when numpy is there, lists otherwise
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None

TASKS = {"auto": 0, "sequence": 1, "token": 2, "embedding": 3, "encoder": 4, "pair_scoring": 5}
TASK_NAMES = {v: k for k, v in TASKS.items()}
TRUNCATION = {"start": 0, "end": 1, "both": 2}
POOLING = {"default": 0, "mean": 1, "cls": 2, "last_token": 3}
OVERFLOW = {"truncate": 0, "reject": 1}


@dataclasses.dataclass(frozen=True)
class InputUsage:
    """What an input was: its tokens (0 when truncated and not counted to its
    end), the tokens the model read, and whether it was cut."""
    input_tokens: int
    processed_tokens: int
    truncated: bool


@dataclasses.dataclass(frozen=True)
class Classification:
    label: str
    class_id: int
    confidence: float
    probabilities: Dict[str, float]  # every label's score, in label order
    input: Optional[InputUsage] = None


@dataclasses.dataclass(frozen=True)
class Entity:
    """An entity span: start/end index the Python text (text[start:end]),
    byte_start/byte_end its UTF-8 bytes (the C API's and the CLI's offsets)."""
    label: str
    start: int
    end: int
    text: str
    score: float
    byte_start: int
    byte_end: int


@dataclasses.dataclass(frozen=True)
class TokenLabel:
    token_id: int
    label: str
    label_id: int
    probability: float
    byte_start: int
    byte_end: int


@dataclasses.dataclass(frozen=True)
class TokenResult:
    entities: List[Entity]
    tokens: List[TokenLabel]
    input: Optional[InputUsage] = None


@dataclasses.dataclass(frozen=True)
class Window:
    """One window of a long document: its text tokens, its bytes, its answer."""
    token_start: int
    token_end: int
    byte_start: int
    byte_end: int
    classification: Classification


@dataclasses.dataclass(frozen=True)
class Match:
    index: int
    score: float


@dataclasses.dataclass(frozen=True)
class Tokens:
    ids: List[int]
    offsets: List[Tuple[int, int]]  # UTF-8 byte ranges ((0, 0) for special tokens)
    tokens: List[str]


def _usage(p) -> Optional[InputUsage]:
    if not p:
        return None
    u = p.contents
    return InputUsage(int(u.input_tokens), int(u.processed_tokens), bool(u.truncated))


def _floats(p, n: int) -> List[float]:
    return [float(p[i]) for i in range(n)] if p else []


def entities_of(array, count: int, source: Text, encoded: bytes) -> List[Entity]:
    found = []
    for i in range(count):
        e = array[i].contents
        span = C.string_at(e.text, e.text_length) if e.text else b""
        found.append(Entity(label=cstr(e.type), start=char_offset(source, encoded, e.begin),
                            end=char_offset(source, encoded, e.end), text=span.decode("utf-8", "replace"),
                            score=float(e.score), byte_start=int(e.begin), byte_end=int(e.end)))
    return found


def model_params(task: str = "auto", device: Optional[str] = None, dtype: Optional[str] = None, threads: int = 0,
                 max_length: int = 0, truncation: str = "start", tokenizer: Optional[str] = None,
                 pooling: str = "default", normalize: bool = True, dimension: int = 0, layer: int = 0,
                 prompt: Optional[str] = None, adapter: Optional[str] = None, merge_adapter: bool = True,
                 max_batch: int = 0, max_wait_us: int = 0, overflow: str = "truncate",
                 count_input_tokens: bool = False) -> _lib.ModelParams:
    """semroute_model_params from keyword arguments (names as in the C header)."""
    p = lib.semroute_model_default_params()
    p.struct_size = C.sizeof(_lib.ModelParams)

    def pick(table, value, what):
        if value not in table:
            raise errors.InvalidArgument(f"{what} must be one of {', '.join(table)}, not {value!r}")
        return table[value]

    def string(s):
        return None if s is None else utf8(str(s))

    p.task = pick(TASKS, task, "task")
    p.device, p.dtype, p.tokenizer = string(device), string(dtype), string(tokenizer)
    p.prompt, p.adapter = string(prompt), string(adapter)
    p.threads, p.max_length, p.dimension, p.layer = threads, max_length, dimension, layer
    p.truncation = pick(TRUNCATION, truncation, "truncation")
    p.pooling = pick(POOLING, pooling, "pooling")
    p.overflow = pick(OVERFLOW, overflow, "overflow")
    p.normalize, p.merge_adapter, p.count_input_tokens = int(normalize), int(merge_adapter), int(count_input_tokens)
    p.max_batch, p.max_wait_us = max_batch, max_wait_us
    return p


def _window_options(size: int, overlap: Optional[int], max_document_tokens: int) -> _lib.WindowOptions:
    o = lib.semroute_window_default_options()
    o.struct_size = C.sizeof(_lib.WindowOptions)
    o.size, o.max_document_tokens = size, max_document_tokens
    if overlap is not None:
        o.overlap = overlap
    return o


class Model(Handle):
    """A model directory (config.json, *.safetensors, tokenizer.json) loaded
    once and shared by threads. Keyword options are the C API's load
    parameters: task ("auto", "sequence", "token", "embedding", "encoder",
    "pair_scoring"), device, dtype ("float32", "bfloat16", "int8", "auto"),
    max_length, truncation, overflow ("truncate" / "reject"), pooling,
    normalize, dimension, layer, prompt, adapter, merge_adapter, max_batch,
    max_wait_us (dynamic batching of concurrent calls), threads.

        with semroute.Model("models/domain") as domain:
            print(domain.classify("What is 2 + 2?").label)
    """

    def __init__(self, path: str, **options):
        self._load(lambda params, out: lib.semroute_model_load(utf8(str(path)), C.byref(params), C.byref(out)),
                   options)

    def _load(self, load, options) -> None:
        params = model_params(**options)
        out = out_handle()
        check(load(params, out))
        super().__init__(out, lib.semroute_model_free)
        h = out
        self.task = TASK_NAMES.get(lib.semroute_model_task(h), "auto")
        self.model_type = cstr(lib.semroute_model_type(h))
        self.architecture = cstr(lib.semroute_model_architecture(h))
        self.hidden_size = int(lib.semroute_model_hidden_size(h))
        self.max_length = int(lib.semroute_model_max_length(h))
        self.labels = [cstr(lib.semroute_model_label(h, i)) for i in range(lib.semroute_model_num_labels(h))]
        self.multi_label = bool(lib.semroute_model_multi_label(h))
        self.embedding_dim = int(lib.semroute_model_embedding_dim(h))

    def bind_head(self, head_dir: str, **options) -> "Model":
        """A task head bound to this model's encoder (shared in memory)."""
        model = Model.__new__(Model)
        self._call(lambda h: model._load(
            lambda params, out: lib.semroute_model_bind_head(h, utf8(str(head_dir)), C.byref(params), C.byref(out)),
            options))
        return model

    def shares_encoder(self, other: "Model") -> bool:
        return bool(self._call(lambda a: other._call(lambda b: lib.semroute_model_shares_encoder(a, b))))

    def __repr__(self) -> str:
        return f"<semroute.Model {self.model_type} {self.task} labels={len(self.labels)}{' closed' if self.closed else ''}>"

    # ------------------------------------------------ sequence classification

    def classify(self, text: Text) -> Classification:
        return self.classify_batch([text])[0]

    def classify_batch(self, texts: Sequence[Text]) -> List[Classification]:
        packed = Packed(as_list(texts))
        return self._classifications(lambda h, out: lib.semroute_classify_batch(
            h, packed.buffer, packed.offsets, packed.count, C.byref(out)))

    def classify_pairs(self, pairs: Sequence[Tuple[Text, Text]]) -> List[Classification]:
        """(premise, hypothesis) pairs read with the tokenizer's pair template."""
        pairs = list(pairs)
        firsts, seconds = Packed(p[0] for p in pairs), Packed(p[1] for p in pairs)
        return self._classifications(lambda h, out: lib.semroute_classify_pairs(
            h, firsts.buffer, firsts.offsets, seconds.buffer, seconds.offsets, firsts.count, C.byref(out)))

    def _classifications(self, call) -> List[Classification]:
        def run(h):
            out = out_handle()
            check(call(h, out))
            try:
                return [self._classification(out, i) for i in range(lib.semroute_classifications_count(out))]
            finally:
                lib.semroute_classifications_free(out)
        return self._call(run)

    def _classification(self, results, i: int) -> Classification:
        n = C.c_size_t()
        scores = _floats(lib.semroute_classifications_probabilities(results, i, C.byref(n)), n.value)
        return Classification(label=cstr(lib.semroute_classifications_label(results, i)),
                              class_id=int(lib.semroute_classifications_class_id(results, i)),
                              confidence=float(lib.semroute_classifications_confidence(results, i)),
                              probabilities=dict(zip(self.labels, scores)),
                              input=_usage(lib.semroute_classifications_input(results, i)))

    def classify_windows(self, document: Text, size: int = 0, overlap: Optional[int] = None,
                         max_document_tokens: int = 0) -> List[Window]:
        """A document longer than max_length, window by window (never cut)."""
        data = utf8(document)
        options = _window_options(size, overlap, max_document_tokens)

        def run(h):
            out = out_handle()
            check(lib.semroute_classify_windows(h, data, len(data), C.byref(options), C.byref(out)))
            try:
                windows = []
                for i in range(lib.semroute_windows_count(out)):
                    w = lib.semroute_windows_window(out, i).contents
                    answer = Classification(cstr(w.label), int(w.class_id), float(w.confidence),
                                            dict(zip(self.labels, _floats(w.probabilities, w.num_labels))))
                    windows.append(Window(int(w.token_begin), int(w.token_end), int(w.begin), int(w.end), answer))
                return windows
            finally:
                lib.semroute_windows_free(out)
        return self._call(run)

    # --------------------------------------------------- token classification

    def entities(self, text: Text) -> List[Entity]:
        return self.token_classify_batch([text])[0].entities

    def entities_batch(self, texts: Sequence[Text]) -> List[List[Entity]]:
        return [r.entities for r in self.token_classify_batch(texts)]

    def token_classify_batch(self, texts: Sequence[Text]) -> List[TokenResult]:
        """Entities and every token's label, per text."""
        texts = as_list(texts)
        packed = Packed(texts)
        return self._token_results(texts, packed.texts, lambda h, out: lib.semroute_token_classify_batch(
            h, packed.buffer, packed.offsets, packed.count, C.byref(out)))

    def token_classify_windows(self, document: Text, size: int = 0, overlap: Optional[int] = None,
                               max_document_tokens: int = 0) -> TokenResult:
        data = utf8(document)
        options = _window_options(size, overlap, max_document_tokens)
        return self._token_results([document], [data], lambda h, out: lib.semroute_token_classify_windows(
            h, data, len(data), C.byref(options), C.byref(out)))[0]

    def _token_results(self, texts, encoded, call) -> List[TokenResult]:
        def run(h):
            out = out_handle()
            check(call(h, out))
            try:
                return [self._token_result(out, i, texts[i], encoded[i])
                        for i in range(lib.semroute_token_results_count(out))]
            finally:
                lib.semroute_token_results_free(out)
        return self._call(run)

    @staticmethod
    def _token_result(results, i: int, source: Text, encoded: bytes) -> TokenResult:
        n = C.c_size_t()
        found = entities_of(lib.semroute_token_results_entities(results, i, C.byref(n)), n.value, source, encoded)
        labels = lib.semroute_token_results_tokens(results, i, C.byref(n))
        tokens = [TokenLabel(int(t.token_id), cstr(t.label), int(t.label_id), float(t.probability), int(t.begin),
                             int(t.end)) for t in (labels[k].contents for k in range(n.value))]
        return TokenResult(found, tokens, _usage(lib.semroute_token_results_input(results, i)))

    # ------------------------------------------------------------- embeddings

    def embed(self, text: Text, layer: int = 0, dimension: int = 0):
        """One embedding: a float32 numpy array (a list without numpy)."""
        return self.embed_batch([text], layer=layer, dimension=dimension)[0]

    def embed_batch(self, texts: Sequence[Text], layer: int = 0, dimension: int = 0):
        """count x dimension float32 numpy array (a list of lists without
        numpy); layer / dimension: a per-call early exit and Matryoshka width."""
        return self.embed_with_input(texts, layer=layer, dimension=dimension)[0]

    def embed_with_input(self, texts: Sequence[Text], layer: int = 0, dimension: int = 0):
        """(embeddings as embed_batch, [InputUsage per text])."""
        packed = Packed(as_list(texts))
        if packed.count == 0:
            raise errors.InvalidArgument("no texts to embed")
        options = lib.semroute_embed_default_options()
        options.struct_size = C.sizeof(_lib.EmbedOptions)
        options.layer, options.dimension = layer, dimension

        def run(h):
            out = out_handle()
            check(lib.semroute_embed_batch_result(h, packed.buffer, packed.offsets, packed.count, C.byref(options),
                                                  C.byref(out)))
            try:
                count, dim = lib.semroute_embeddings_count(out), lib.semroute_embeddings_dimension(out)
                rows = [lib.semroute_embeddings_vector(out, i) for i in range(count)]
                usage = [_usage(lib.semroute_embeddings_input(out, i)) for i in range(count)]
                if _np is not None:
                    matrix = _np.empty((count, dim), dtype=_np.float32)
                    for i, row in enumerate(rows):
                        C.memmove(matrix[i].ctypes.data, row, dim * 4)
                    return matrix, usage
                return [_floats(row, dim) for row in rows], usage
            finally:
                lib.semroute_embeddings_free(out)
        return self._call(run)

    def similarity(self, a: Text, b: Text) -> float:
        """Cosine similarity of two texts' embeddings."""
        x, y = utf8(a), utf8(b)
        score = C.c_float()
        self._call(lambda h: check(lib.semroute_similarity(h, x, len(x), y, len(y), C.byref(score))))
        return float(score.value)

    def top_k(self, query: Text, candidates: Sequence[Text], k: int) -> List[Match]:
        """The k candidates most similar to the query, best first."""
        return self._ranked(lib.semroute_top_k, query, candidates, k)

    def rerank(self, query: Text, documents: Sequence[Text], k: int) -> List[Match]:
        """The k documents most relevant to the query (a pair-scoring model)."""
        return self._ranked(lib.semroute_rerank, query, documents, k)

    def _ranked(self, fn, query: Text, candidates: Sequence[Text], k: int) -> List[Match]:
        q, packed = utf8(query), Packed(as_list(candidates))
        if k < 0:
            raise errors.InvalidArgument("k must be >= 0")
        indices, scores, found = (C.c_size_t * max(k, 1))(), (C.c_float * max(k, 1))(), C.c_size_t()
        self._call(lambda h: check(fn(h, q, len(q), packed.buffer, packed.offsets, packed.count, k, indices, scores,
                                      C.byref(found))))
        return [Match(int(indices[i]), float(scores[i])) for i in range(found.value)]

    def score_pairs(self, pairs: Sequence[Tuple[Text, Text]]) -> List[float]:
        """One raw relevance logit per (query, document) pair."""
        pairs = list(pairs)
        queries, documents = Packed(p[0] for p in pairs), Packed(p[1] for p in pairs)

        def run(h):
            out = out_handle()
            check(lib.semroute_score_pairs(h, queries.buffer, queries.offsets, documents.buffer, documents.offsets,
                                           queries.count, C.byref(out)))
            try:
                return [float(lib.semroute_pair_scores_score(out, i)) for i in range(lib.semroute_pair_scores_count(out))]
            finally:
                lib.semroute_pair_scores_free(out)
        return self._call(run)

    # ------------------------------------------------------------ tokenization

    def tokenize(self, text: Text, add_special_tokens: bool = True, whole: bool = False) -> Tokens:
        """Tokens as the model reads them (whole=True: max_length not applied)."""
        data = utf8(text)
        fn = lib.semroute_tokenize_whole if whole else lib.semroute_tokenize

        def run(h):
            out = out_handle()
            check(fn(h, data, len(data), int(add_special_tokens), C.byref(out)))
            try:
                n = lib.semroute_tokens_count(out)
                ids, offsets = lib.semroute_tokens_ids(out), lib.semroute_tokens_offsets(out)
                return Tokens([int(ids[i]) for i in range(n)],
                              [(int(offsets[2 * i]), int(offsets[2 * i + 1])) for i in range(n)],
                              [cstr(lib.semroute_tokens_token(out, i)) for i in range(n)])
            finally:
                lib.semroute_tokens_free(out)
        return self._call(run)
