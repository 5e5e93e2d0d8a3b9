"""The multi-task engine (one encoder pass, LoRA task branches) and the
unified classifier (a YAML of tasks, each on a fine-tuned model, an adapter
or both)."""

from __future__ import annotations

import ctypes as C
import dataclasses
import os
from typing import Dict, List, Mapping, Optional, Sequence

from . import _lib, errors
from ._handle import Handle, Packed, Text, as_list, out_handle, utf8
from ._lib import check, cstr, lib
from .model import TASKS, TASK_NAMES, Entity, entities_of, model_params

PATHS = {0: "traditional", 1: "lora"}


@dataclasses.dataclass(frozen=True)
class TaskAnswer:
    """One task's answer for one text. A sequence task fills label,
    confidence, probabilities, risk (the positive labels' total) and flagged;
    a token task fills entities. error (with error_code) says why no path
    answered; the other fields are then empty."""
    task: str
    kind: str  # "sequence" or "token"
    path: str  # "traditional" or "lora"
    reason: str
    latency_ms: float
    error: Optional[str] = None
    error_code: int = 0
    label: str = ""
    class_id: int = -1
    confidence: float = 0.0
    probabilities: List[float] = dataclasses.field(default_factory=list)
    risk: float = 0.0
    flagged: bool = False
    entities: List[Entity] = dataclasses.field(default_factory=list)


def _answer(a: _lib.TaskAnswer, source: Text, encoded: bytes) -> TaskAnswer:
    error = cstr(a.error) if a.error else None
    has_code = a.struct_size >= _lib.TaskAnswer.error_code.offset + 4
    return TaskAnswer(task=cstr(a.task), kind=TASK_NAMES.get(a.task_kind, str(a.task_kind)),
                      path=PATHS.get(a.path, str(a.path)), reason=cstr(a.reason), latency_ms=float(a.latency_ms),
                      error=error, error_code=int(a.error_code) if has_code else (8 if error else 0),
                      label=cstr(a.label), class_id=int(a.class_id), confidence=float(a.confidence),
                      probabilities=[float(a.probabilities[i]) for i in range(a.num_labels)] if a.probabilities else [],
                      risk=float(a.risk), flagged=bool(a.flagged),
                      entities=entities_of(a.entities, a.num_entities, source, encoded) if a.entities else [])


def _task_results(texts: List[Text], call) -> List[Dict[str, TaskAnswer]]:
    """Runs call(out) and reads every text's answers as {task: TaskAnswer}."""
    packed = Packed(texts)
    out = out_handle()
    check(call(packed, out))
    try:
        answers = []
        n = C.c_size_t()
        for i in range(lib.semroute_task_results_count(out)):
            row = lib.semroute_task_results_answers(out, i, C.byref(n))
            answers.append({a.task: a for a in (_answer(row[k].contents, texts[i], packed.texts[i])
                                                for k in range(n.value))})
        return answers
    finally:
        lib.semroute_task_results_free(out)


class _TaskClassifier(Handle):
    def classify(self, text: Text, tasks: Optional[Sequence[str]] = None) -> Dict[str, TaskAnswer]:
        """{task: answer} for one text (tasks: a subset by name; None: all)."""
        return self.classify_batch([text], tasks)[0]

    def classify_batch(self, texts: Sequence[Text], tasks: Optional[Sequence[str]] = None):
        names = Packed([] if tasks is None else as_list(tasks))
        texts = as_list(texts)
        return self._call(lambda h: _task_results(texts, lambda packed, out: self._classify(h, packed, names, out)))


class Engine(_TaskClassifier):
    """A base model and task adapters run in one shared pass:

        Engine("models/multitask/base", {"domain": "models/multitask/domain",
                                         "pii": "models/multitask/pii"})

    tasks maps a name to an adapter directory (its kind read from the adapter)
    or to (directory, "sequence" | "token"). Options as Model's (device,
    dtype, max_length, ...)."""

    def __init__(self, base: str, tasks: Mapping[str, "str | tuple"], **options):
        if not tasks:
            raise errors.InvalidArgument("an engine needs at least one task")
        entries = (_lib.EngineTask * len(tasks))()
        keep = []  # the bytes the structs point into
        for entry, (name, spec) in zip(entries, tasks.items()):
            adapter, kind = (spec, "auto") if isinstance(spec, (str, bytes, os.PathLike)) else spec
            if kind not in ("auto", "sequence", "token"):
                raise errors.InvalidArgument(f"task {name!r}: kind must be auto, sequence or token, not {kind!r}")
            keep += [utf8(name), utf8(adapter if isinstance(adapter, bytes) else os.fspath(adapter))]
            entry.struct_size = C.sizeof(_lib.EngineTask)
            entry.name, entry.adapter, entry.task_kind = keep[-2], keep[-1], TASKS[kind]
        params = model_params(**options)
        out = out_handle()
        check(lib.semroute_engine_load(utf8(str(base)), entries, len(tasks), C.byref(params), C.byref(out)))
        super().__init__(out, lib.semroute_engine_free)
        self.tasks = list(tasks)

    @staticmethod
    def _classify(h, packed: Packed, names: Packed, out):
        return lib.semroute_engine_classify(h, packed.buffer, packed.offsets, packed.count, names.buffer,
                                            names.offsets, names.count, C.byref(out))


class Unified(_TaskClassifier):
    """The unified classifier from its YAML (e.g. models/router.yaml)."""

    def __init__(self, config_path: str, prefer_accuracy: bool = False):
        out = out_handle()
        check(lib.semroute_unified_load(utf8(str(config_path)), C.byref(out)))
        super().__init__(out, lib.semroute_unified_free)
        self.prefer_accuracy = prefer_accuracy

    def _classify(self, h, packed: Packed, names: Packed, out):
        return lib.semroute_unified_classify(h, packed.buffer, packed.offsets, packed.count, names.buffer,
                                             names.offsets, names.count, int(self.prefer_accuracy), C.byref(out))
