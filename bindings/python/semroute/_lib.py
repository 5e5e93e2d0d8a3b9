"""The C library (libsemroute.so.0) and its declarations, through ctypes.

Found, in order: $SEMROUTE_LIBRARY (a path), the dynamic loader's search
(LD_LIBRARY_PATH, ldconfig: an installed library), pkg-config's libdir for
semroute, then a build tree above this file (build/capi/, for a checkout).
ctypes drops the GIL around every foreign call, so threads run in parallel.
"""

from __future__ import annotations

import ctypes as C
import os
import pathlib
import subprocess

from .errors import Error, raise_for

SONAME = "libsemroute.so.0"


def _candidates():
    env = os.environ.get("SEMROUTE_LIBRARY")
    if env:
        yield env
        return
    yield SONAME
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "semroute"], capture_output=True,
                                text=True, timeout=10, check=False).stdout.strip()
        if libdir:
            yield os.path.join(libdir, SONAME)
    except OSError:
        pass
    for parent in pathlib.Path(__file__).resolve().parents:
        built = parent / "build" / "capi" / SONAME
        if built.exists():
            yield str(built)


def _load() -> C.CDLL:
    tried = []
    for path in _candidates():
        try:
            return C.CDLL(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
    raise ImportError("semroute: libsemroute.so.0 not found (set SEMROUTE_LIBRARY to its path, or install the "
                      "library: cmake --install build). Tried:\n  " + "\n  ".join(tried))


lib = _load()

# ------------------------------------------------------------------ types

p_char = C.c_char_p
p_u64 = C.POINTER(C.c_uint64)
p_float = C.POINTER(C.c_float)
p_size = C.POINTER(C.c_size_t)
status_p = C.c_void_p  # semroute_status*; NULL is success


class ModelParams(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("task", C.c_int32), ("device", p_char), ("dtype", p_char),
                ("threads", C.c_int32), ("max_length", C.c_uint32), ("truncation", C.c_int32),
                ("tokenizer", p_char), ("pooling", C.c_int32), ("normalize", C.c_int32),
                ("dimension", C.c_uint32), ("layer", C.c_uint32), ("prompt", p_char), ("adapter", p_char),
                ("merge_adapter", C.c_int32), ("max_batch", C.c_uint32), ("max_wait_us", C.c_uint32),
                ("overflow", C.c_int32), ("count_input_tokens", C.c_int32)]


class InputUsage(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("input_tokens", C.c_uint64), ("processed_tokens", C.c_uint64),
                ("truncated", C.c_int32)]


class WindowOptions(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("size", C.c_uint32), ("overlap", C.c_uint32),
                ("max_document_tokens", C.c_uint64)]


class Window(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("token_begin", C.c_uint64), ("token_end", C.c_uint64),
                ("begin", C.c_uint64), ("end", C.c_uint64), ("class_id", C.c_int32), ("label", p_char),
                ("confidence", C.c_float), ("probabilities", p_float), ("num_labels", C.c_size_t)]


class Entity(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("type", p_char), ("begin", C.c_uint64), ("end", C.c_uint64),
                ("text", C.c_void_p), ("text_length", C.c_size_t), ("score", C.c_float)]


class TokenLabel(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("token_id", C.c_int32), ("label_id", C.c_int32),
                ("label", p_char), ("begin", C.c_uint64), ("end", C.c_uint64), ("probability", C.c_float)]


class EmbedOptions(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("layer", C.c_uint32), ("dimension", C.c_uint32)]


class TaskAnswer(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("task", p_char), ("task_kind", C.c_int32), ("path", C.c_int32),
                ("reason", p_char), ("latency_ms", C.c_double), ("error", p_char), ("class_id", C.c_int32),
                ("label", p_char), ("confidence", C.c_float), ("probabilities", p_float),
                ("num_labels", C.c_size_t), ("risk", C.c_float), ("flagged", C.c_int32),
                ("entities", C.POINTER(C.POINTER(Entity))), ("num_entities", C.c_size_t),
                ("error_code", C.c_int32)]


class EngineTask(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("name", p_char), ("adapter", p_char), ("task_kind", C.c_int32)]


class CompressParams(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("max_tokens", C.c_uint32), ("head_ratio", C.c_double),
                ("tail_ratio", C.c_double), ("drop_stop_words", C.c_int32), ("languages", p_char),
                ("tokenizer", p_char)]


class HallucParams(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("nli_model", p_char), ("input_template", p_char),
                ("threshold", C.c_double), ("min_span_words", C.c_uint32), ("min_span_score", C.c_double),
                ("context_windows", C.c_uint32), ("window_overlap", C.c_uint32), ("answer_tokens", C.c_uint32),
                ("answer_context_bytes", C.c_uint32), ("max_sentence_bytes", C.c_uint32),
                ("nli_filter", C.c_int32), ("nli_entailment_threshold", C.c_double),
                ("nli_confidence", C.c_double), ("model", C.POINTER(ModelParams))]


class HallucSpan(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("begin", C.c_uint64), ("end", C.c_uint64), ("score", C.c_double),
                ("nli_label", p_char), ("entailment", C.c_double), ("neutral", C.c_double),
                ("contradiction", C.c_double), ("severity", C.c_int32)]


class HallucSentence(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("begin", C.c_uint64), ("end", C.c_uint64), ("event", C.c_int32),
                ("max_score", C.c_double), ("latency_ms", C.c_double), ("span_count", C.c_size_t),
                ("spans", C.POINTER(C.POINTER(HallucSpan)))]


# ------------------------------------------------------------- functions

V = C.c_void_p
_pp = C.POINTER(C.c_void_p)  # an out-handle
_declarations = {
    # name: (restype, argtypes)
    "semroute_version": (p_char, []),
    "semroute_abi_version": (C.c_int, []),
    "semroute_status_code": (C.c_int, [V]),
    "semroute_status_message": (p_char, [V]),
    "semroute_code_name": (p_char, [C.c_int]),
    "semroute_status_free": (None, [V]),
    "semroute_model_default_params": (ModelParams, []),
    "semroute_model_load": (status_p, [p_char, C.POINTER(ModelParams), _pp]),
    "semroute_model_bind_head": (status_p, [V, p_char, C.POINTER(ModelParams), _pp]),
    "semroute_model_shares_encoder": (C.c_int, [V, V]),
    "semroute_model_free": (None, [V]),
    "semroute_model_task": (C.c_int, [V]),
    "semroute_model_type": (p_char, [V]),
    "semroute_model_architecture": (p_char, [V]),
    "semroute_model_hidden_size": (C.c_size_t, [V]),
    "semroute_model_max_length": (C.c_size_t, [V]),
    "semroute_model_num_labels": (C.c_size_t, [V]),
    "semroute_model_label": (p_char, [V, C.c_size_t]),
    "semroute_model_multi_label": (C.c_int, [V]),
    "semroute_model_embedding_dim": (C.c_size_t, [V]),
    "semroute_tokenize": (status_p, [V, C.c_void_p, C.c_size_t, C.c_int, _pp]),
    "semroute_tokenize_whole": (status_p, [V, C.c_void_p, C.c_size_t, C.c_int, _pp]),
    "semroute_tokens_count": (C.c_size_t, [V]),
    "semroute_tokens_ids": (C.POINTER(C.c_int32), [V]),
    "semroute_tokens_offsets": (p_u64, [V]),
    "semroute_tokens_token": (p_char, [V, C.c_size_t]),
    "semroute_tokens_free": (None, [V]),
    "semroute_classify_batch": (status_p, [V, C.c_void_p, p_u64, C.c_size_t, _pp]),
    "semroute_classify_pairs": (status_p, [V, C.c_void_p, p_u64, C.c_void_p, p_u64, C.c_size_t, _pp]),
    "semroute_classifications_count": (C.c_size_t, [V]),
    "semroute_classifications_class_id": (C.c_int32, [V, C.c_size_t]),
    "semroute_classifications_label": (p_char, [V, C.c_size_t]),
    "semroute_classifications_confidence": (C.c_float, [V, C.c_size_t]),
    "semroute_classifications_probabilities": (p_float, [V, C.c_size_t, p_size]),
    "semroute_classifications_input": (C.POINTER(InputUsage), [V, C.c_size_t]),
    "semroute_classifications_free": (None, [V]),
    "semroute_window_default_options": (WindowOptions, []),
    "semroute_classify_windows": (status_p, [V, C.c_void_p, C.c_size_t, C.POINTER(WindowOptions), _pp]),
    "semroute_windows_count": (C.c_size_t, [V]),
    "semroute_windows_window": (C.POINTER(Window), [V, C.c_size_t]),
    "semroute_windows_content_tokens": (C.c_uint64, [V]),
    "semroute_windows_free": (None, [V]),
    "semroute_token_classify_batch": (status_p, [V, C.c_void_p, p_u64, C.c_size_t, _pp]),
    "semroute_token_classify_windows": (status_p, [V, C.c_void_p, C.c_size_t, C.POINTER(WindowOptions), _pp]),
    "semroute_token_results_count": (C.c_size_t, [V]),
    "semroute_token_results_entities": (C.POINTER(C.POINTER(Entity)), [V, C.c_size_t, p_size]),
    "semroute_token_results_tokens": (C.POINTER(C.POINTER(TokenLabel)), [V, C.c_size_t, p_size]),
    "semroute_token_results_input": (C.POINTER(InputUsage), [V, C.c_size_t]),
    "semroute_token_results_free": (None, [V]),
    "semroute_embed_default_options": (EmbedOptions, []),
    "semroute_embed_batch_result": (status_p, [V, C.c_void_p, p_u64, C.c_size_t, C.POINTER(EmbedOptions), _pp]),
    "semroute_embeddings_count": (C.c_size_t, [V]),
    "semroute_embeddings_dimension": (C.c_size_t, [V]),
    "semroute_embeddings_vector": (p_float, [V, C.c_size_t]),
    "semroute_embeddings_input": (C.POINTER(InputUsage), [V, C.c_size_t]),
    "semroute_embeddings_free": (None, [V]),
    "semroute_similarity": (status_p, [V, C.c_void_p, C.c_size_t, C.c_void_p, C.c_size_t, p_float]),
    "semroute_top_k": (status_p, [V, C.c_void_p, C.c_size_t, C.c_void_p, p_u64, C.c_size_t, C.c_size_t, p_size,
                                  p_float, p_size]),
    "semroute_rerank": (status_p, [V, C.c_void_p, C.c_size_t, C.c_void_p, p_u64, C.c_size_t, C.c_size_t, p_size,
                                   p_float, p_size]),
    "semroute_score_pairs": (status_p, [V, C.c_void_p, p_u64, C.c_void_p, p_u64, C.c_size_t, _pp]),
    "semroute_pair_scores_count": (C.c_size_t, [V]),
    "semroute_pair_scores_score": (C.c_float, [V, C.c_size_t]),
    "semroute_pair_scores_input": (C.POINTER(InputUsage), [V, C.c_size_t]),
    "semroute_pair_scores_free": (None, [V]),
    "semroute_task_results_count": (C.c_size_t, [V]),
    "semroute_task_results_answers": (C.POINTER(C.POINTER(TaskAnswer)), [V, C.c_size_t, p_size]),
    "semroute_task_results_free": (None, [V]),
    "semroute_engine_load": (status_p, [p_char, C.POINTER(EngineTask), C.c_size_t, C.POINTER(ModelParams), _pp]),
    "semroute_engine_free": (None, [V]),
    "semroute_engine_classify": (status_p, [V, C.c_void_p, p_u64, C.c_size_t, C.c_void_p, p_u64, C.c_size_t,
                                            _pp]),
    "semroute_unified_load": (status_p, [p_char, _pp]),
    "semroute_unified_free": (None, [V]),
    "semroute_unified_classify": (status_p, [V, C.c_void_p, p_u64, C.c_size_t, C.c_void_p, p_u64, C.c_size_t,
                                             C.c_int, _pp]),
    "semroute_router_load": (status_p, [p_char, _pp]),
    "semroute_router_free": (None, [V]),
    "semroute_router_route": (status_p, [V, C.c_void_p, C.c_size_t, C.c_void_p, C.c_size_t, _pp]),
    "semroute_route_decision": (p_char, [V]),
    "semroute_route_confidence": (C.c_double, [V]),
    "semroute_route_blocked": (C.c_int, [V]),
    "semroute_route_model": (p_char, [V]),
    "semroute_route_request_json": (p_char, [V]),
    "semroute_route_cache_hit": (C.c_int, [V]),
    "semroute_route_response_json": (p_char, [V]),
    "semroute_route_header_count": (C.c_size_t, [V]),
    "semroute_route_header_name": (p_char, [V, C.c_size_t]),
    "semroute_route_header_value": (p_char, [V, C.c_size_t]),
    "semroute_route_json": (p_char, [V]),
    "semroute_route_check_answer": (C.c_int, [V]),
    "semroute_route_free": (None, [V]),
    "semroute_router_store_answer": (status_p, [V, V, C.c_void_p, C.c_size_t, C.POINTER(C.c_int)]),
    "semroute_router_check_answer": (status_p, [V, V, C.c_void_p, C.c_size_t, C.c_int, _pp]),
    "semroute_runtime_create": (status_p, [C.c_uint32, C.c_uint32, _pp]),
    "semroute_runtime_add_model": (status_p, [V, p_char, p_char, C.POINTER(ModelParams)]),
    "semroute_runtime_add_heads": (status_p, [V, p_char, p_char, C.c_size_t, C.POINTER(p_char), C.POINTER(p_char),
                                              C.POINTER(ModelParams)]),
    "semroute_runtime_call": (status_p, [V, p_char, p_char, C.c_void_p, C.c_size_t, _pp]),
    "semroute_runtime_reply_status": (C.c_int, [V]),
    "semroute_runtime_reply_body": (C.c_void_p, [V, p_size]),
    "semroute_runtime_reply_server_timing": (p_char, [V]),
    "semroute_runtime_reply_free": (None, [V]),
    "semroute_runtime_free": (None, [V]),
    "semroute_compress_default_params": (CompressParams, []),
    "semroute_compressor_new": (status_p, [C.POINTER(CompressParams), _pp]),
    "semroute_compressor_free": (None, [V]),
    "semroute_compress": (status_p, [V, C.c_void_p, C.c_size_t, _pp]),
    "semroute_compressed_text": (C.c_void_p, [V, p_size]),
    "semroute_compressed_reduced": (C.c_int, [V]),
    "semroute_compressed_tokens": (C.c_size_t, [V]),
    "semroute_compressed_language": (p_char, [V]),
    "semroute_compressed_ranges": (p_u64, [V, p_size]),
    "semroute_compressed_free": (None, [V]),
    "semroute_halluc_default_params": (HallucParams, []),
    "semroute_halluc_load": (status_p, [p_char, C.POINTER(HallucParams), _pp]),
    "semroute_halluc_free": (None, [V]),
    "semroute_halluc_detect": (status_p, [V, C.c_void_p, C.c_size_t, C.c_void_p, C.c_size_t, C.c_void_p,
                                          C.c_size_t, _pp]),
    "semroute_halluc_stream_open": (status_p, [V, C.c_void_p, C.c_size_t, C.c_void_p, C.c_size_t, C.c_int,
                                               C.c_int, _pp]),
    "semroute_halluc_stream_feed": (status_p, [V, C.c_void_p, C.c_size_t, _pp]),
    "semroute_halluc_stream_finish": (status_p, [V, _pp]),
    "semroute_halluc_stream_free": (None, [V]),
    "semroute_halluc_result_count": (C.c_size_t, [V]),
    "semroute_halluc_result_sentence": (C.POINTER(HallucSentence), [V, C.c_size_t]),
    "semroute_halluc_result_free": (None, [V]),
}

for _name, (_restype, _argtypes) in _declarations.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _restype, _argtypes


ABI_VERSION = 0  # SEMROUTE_ABI_VERSION of the header this module follows


def _check_layouts():
    """The library fills struct_size with its own sizeof: a header this
    module does not match would read garbage, so refuse to start instead."""
    if lib.semroute_abi_version() != ABI_VERSION:
        raise ImportError(f"semroute: the loaded library has ABI {lib.semroute_abi_version()}, this package "
                          f"speaks ABI {ABI_VERSION}")
    for struct, default in ((ModelParams, lib.semroute_model_default_params),
                            (WindowOptions, lib.semroute_window_default_options),
                            (EmbedOptions, lib.semroute_embed_default_options),
                            (CompressParams, lib.semroute_compress_default_params),
                            (HallucParams, lib.semroute_halluc_default_params)):
        got = default().struct_size
        if got < C.sizeof(struct):
            raise ImportError(f"semroute: the loaded library's {struct.__name__} is {got} bytes, this package "
                              f"expects {C.sizeof(struct)}: the library is older than the package")


_check_layouts()


def check(status) -> None:
    """Raises the Error subclass of a failed call's status (and frees it)."""
    if not status:
        return
    try:
        code = lib.semroute_status_code(status)
        message = (lib.semroute_status_message(status) or b"").decode("utf-8", "replace")
    finally:
        lib.semroute_status_free(status)
    raise_for(code, message)


def cstr(p) -> str:
    """A borrowed NUL-terminated string as str ('' for NULL)."""
    return p.decode("utf-8", "replace") if p else ""


__all__ = ["lib", "check", "cstr", "Error"]
