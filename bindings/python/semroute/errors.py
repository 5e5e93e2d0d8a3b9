"""Exceptions carrying the C API's stable error codes (semroute_code)."""

from __future__ import annotations

import enum


class Code(enum.IntEnum):
    """semroute_code: never renumbered, only appended."""
    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    INVALID_MODEL = 3
    UNSUPPORTED = 4
    INVALID_UTF8 = 5
    TOO_LONG = 6
    OUT_OF_MEMORY = 7
    INTERNAL = 8


class Error(Exception):
    """A failure the library reported: `code` (a Code), `code_name` (its
    stable name, e.g. "invalid_utf8") and the message."""

    code = Code.INTERNAL

    def __init__(self, message: str = "", code: "Code | int | None" = None):
        if code is not None:
            self.code = Code(code) if code in Code._value2member_map_ else code
        self.message = message
        super().__init__(f"{self.code_name}: {message}" if message else self.code_name)

    @property
    def code_name(self) -> str:
        return self.code.name.lower() if isinstance(self.code, Code) else f"code({int(self.code)})"


class InvalidArgument(Error, ValueError):
    code = Code.INVALID_ARGUMENT


class NotFound(Error, LookupError):
    code = Code.NOT_FOUND


class InvalidModel(Error):
    code = Code.INVALID_MODEL


class Unsupported(Error):
    code = Code.UNSUPPORTED


class InvalidUTF8(Error, ValueError):
    code = Code.INVALID_UTF8


class TooLong(Error, ValueError):
    code = Code.TOO_LONG


class OutOfMemory(Error, MemoryError):
    code = Code.OUT_OF_MEMORY


class Internal(Error):
    code = Code.INTERNAL


class Closed(InvalidArgument):
    """A call on a handle after close()."""


_BY_CODE = {cls.code: cls for cls in (InvalidArgument, NotFound, InvalidModel, Unsupported, InvalidUTF8, TooLong,
                                      OutOfMemory, Internal)}


def raise_for(code: int, message: str):
    cls = _BY_CODE.get(code)
    raise (cls(message) if cls else Error(message, code))
