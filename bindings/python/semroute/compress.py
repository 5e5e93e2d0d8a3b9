"""Prompt compression (semroute_compress*): a long prompt reduced to a
skeleton within a token budget, for classifying it fast. No model."""

from __future__ import annotations

import ctypes as C
import dataclasses
from typing import List, Optional, Tuple

from . import _lib
from ._handle import Handle, Text, out_handle, utf8
from ._lib import check, cstr, lib


@dataclasses.dataclass(frozen=True)
class Compressed:
    text: str        # the skeleton (the whole text when it fit)
    reduced: bool
    tokens: int      # the skeleton's tokens, as the budget counts them
    language: str    # the stop-word list used ("" for none)
    ranges: List[Tuple[int, int]]  # kept UTF-8 byte ranges of the original


class Compressor(Handle):
    """Compressor(max_tokens=512, head_ratio=0.2, tail_ratio=0.2,
    drop_stop_words=True, languages="en,de" or None (every list shipped),
    tokenizer=a tokenizer.json or model directory, None = words)."""

    def __init__(self, max_tokens: int = 512, head_ratio: float = 0.2, tail_ratio: float = 0.2,
                 drop_stop_words: bool = True, languages: Optional[str] = None, tokenizer: Optional[str] = None):
        params = lib.semroute_compress_default_params()
        params.struct_size = C.sizeof(_lib.CompressParams)
        params.max_tokens, params.head_ratio, params.tail_ratio = max_tokens, head_ratio, tail_ratio
        params.drop_stop_words = int(drop_stop_words)
        params.languages = None if languages is None else utf8(languages)
        params.tokenizer = None if tokenizer is None else utf8(str(tokenizer))
        out = out_handle()
        check(lib.semroute_compressor_new(C.byref(params), C.byref(out)))
        super().__init__(out, lib.semroute_compressor_free)

    def compress(self, text: Text) -> Compressed:
        data = utf8(text)

        def run(h):
            out = out_handle()
            check(lib.semroute_compress(h, data, len(data), C.byref(out)))
            try:
                n = C.c_size_t()
                skeleton = C.string_at(lib.semroute_compressed_text(out, C.byref(n)), n.value)
                ranges = lib.semroute_compressed_ranges(out, C.byref(n))
                return Compressed(skeleton.decode("utf-8", "replace"), bool(lib.semroute_compressed_reduced(out)),
                                  int(lib.semroute_compressed_tokens(out)), cstr(lib.semroute_compressed_language(out)),
                                  [(int(ranges[2 * i]), int(ranges[2 * i + 1])) for i in range(n.value)])
            finally:
                lib.semroute_compressed_free(out)
        return self._call(run)
