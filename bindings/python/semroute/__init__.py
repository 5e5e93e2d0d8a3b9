"""semroute: the classification and embedding work of an LLM semantic router
(domain / intent, jailbreak and PII detection, similarity, routing), in
process, through the C library libsemroute.

    import semroute
    with semroute.Model("models/domain") as domain:
        answer = domain.classify("What is the derivative of x^2 + 3x?")
        print(answer.label, answer.confidence)

Every handle (Model, Engine, Unified, Router, Route, Compressor,
HallucinationDetector, AnswerStream) is thread-safe like the C API, frees
its C object on close() or at the end of a `with` block, and raises
semroute.Error subclasses carrying the C API's stable codes.
"""

from ._lib import lib as _lib_handle
from .client import Busy, Client, DeadlineExceeded, RemoteAnswerStream, RemoteDetector, RemoteModel, RemoteRoute, RemoteRouter, RemoteUnified
from .compress import Compressed, Compressor
from .errors import (Closed, Code, Error, Internal, InvalidArgument, InvalidModel, InvalidUTF8, NotFound, OutOfMemory,
                     TooLong, Unsupported)
from .hallucination import AnswerStream, HallucinationDetector, Sentence, Span
from .model import (Classification, Entity, InputUsage, Match, Model, TokenLabel, TokenResult, Tokens, Window)
from .multitask import Engine, TaskAnswer, Unified
from .router import Route, Router
from .runtime import Runtime
from .training import calibrate, cli_path, train

__version__ = "0.1.0"


def version() -> str:
    """The loaded library's version (e.g. "0.1.0")."""
    return _lib_handle.semroute_version().decode()


def abi_version() -> int:
    return int(_lib_handle.semroute_abi_version())


__all__ = ["Runtime", "AnswerStream", "Busy", "Client", "DeadlineExceeded", "RemoteAnswerStream", "RemoteDetector", "RemoteModel", "RemoteRoute", "RemoteRouter", "RemoteUnified", "Classification", "Closed", "Code", "Compressed", "Compressor", "Engine", "Entity",
           "Error", "HallucinationDetector", "InputUsage", "Internal", "InvalidArgument", "InvalidModel",
           "InvalidUTF8", "Match", "Model", "NotFound", "OutOfMemory", "Route", "Router", "Sentence", "Span",
           "TaskAnswer", "TokenLabel", "TokenResult", "Tokens", "TooLong", "Unified", "Unsupported", "Window",
           "abi_version", "calibrate", "cli_path", "train", "version"]
