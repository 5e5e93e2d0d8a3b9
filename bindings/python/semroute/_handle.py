"""What every wrapper shares: a handle freed once, after the calls in flight,
and texts handed to C as UTF-8 bytes (one buffer + offsets for a batch)."""

from __future__ import annotations

import ctypes as C
import threading
from typing import Callable, Iterable, Sequence, Union

from . import errors

Text = Union[str, bytes]


class Handle:
    """A C handle. Calls run concurrently (the C API is thread-safe); close()
    waits for those in flight, frees the handle once, and later calls raise
    errors.Closed. Use it as a context manager to free it at the block's end."""

    _free: Callable[[C.c_void_p], None]

    def __init__(self, ptr: C.c_void_p, free: Callable[[C.c_void_p], None]):
        self._ptr = ptr
        self._free = free
        self._lock = threading.Condition()
        self._calls = 0

    def _enter(self) -> C.c_void_p:
        with self._lock:
            if not self._ptr:
                raise errors.Closed(f"{type(self).__name__} is closed")
            self._calls += 1
            return self._ptr

    def _leave(self) -> None:
        with self._lock:
            self._calls -= 1
            if self._calls == 0:
                self._lock.notify_all()

    def _call(self, fn: Callable[[C.c_void_p], object]):
        """fn(ptr) with close() held off until it returns."""
        ptr = self._enter()
        try:
            return fn(ptr)
        finally:
            self._leave()

    def close(self) -> None:
        with self._lock:
            while self._calls:
                self._lock.wait()
            ptr, self._ptr = self._ptr, None
        if ptr:
            self._free(ptr)

    @property
    def closed(self) -> bool:
        return not self._ptr

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the module may be gone
            pass


def out_handle() -> C.c_void_p:
    return C.c_void_p()


def utf8(text: Text) -> bytes:
    """str as UTF-8 (a lone surrogate is the library's invalid_utf8 error);
    bytes as given (the library checks them)."""
    if isinstance(text, bytes):
        return text
    if not isinstance(text, str):
        raise errors.InvalidArgument(f"expected str or bytes, got {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise errors.InvalidUTF8(f"text is not valid Unicode: {e.reason} at {e.start}") from None


class Packed:
    """count texts in one buffer with count + 1 byte offsets, as the C API's
    batch calls take them."""

    def __init__(self, texts: Iterable[Text]):
        encoded = [utf8(t) for t in texts]
        self.count = len(encoded)
        self.texts = encoded
        self.buffer = C.create_string_buffer(b"".join(encoded), sum(map(len, encoded)) + 1)
        offsets = [0]
        for t in encoded:
            offsets.append(offsets[-1] + len(t))
        self.offsets = (C.c_uint64 * len(offsets))(*offsets)


def as_list(texts: "Sequence[Text] | Text") -> list:
    if isinstance(texts, (str, bytes)):
        raise errors.InvalidArgument("expected a list of texts, got one text")
    return list(texts)


def char_offset(text: Text, encoded: bytes, byte_offset: int) -> int:
    """A UTF-8 byte offset as an index into text (str), or itself for bytes."""
    if isinstance(text, bytes) or len(encoded) == len(text):
        return byte_offset
    return len(encoded[:byte_offset].decode("utf-8", "replace"))
