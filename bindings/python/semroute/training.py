"""Training and calibration through the `semroute` command-line tool (its
`train` and `calibrate` commands run libtorch autograd in C++; the C API has
no training calls). The tool is $SEMROUTE_CLI, `semroute` on PATH, or the
one beside the loaded library (an install's bin/, a build tree's cli/)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
from typing import Any, Dict, Optional, Sequence, Union

from . import errors

Files = Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]


def cli_path() -> str:
    env = os.environ.get("SEMROUTE_CLI")
    if env:
        return env
    found = shutil.which("semroute")
    if found:
        return found
    for library in _loaded_library_paths():
        lib_dir = pathlib.Path(library).parent
        for candidate in (lib_dir.parent / "bin" / "semroute", lib_dir.parent / "cli" / "semroute"):
            if candidate.exists():
                return str(candidate)
    raise errors.NotFound("the semroute command-line tool was not found: set SEMROUTE_CLI or put it on PATH")


def _loaded_library_paths():
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            return sorted({line.split()[-1] for line in maps if "libsemroute.so" in line})
    except OSError:
        return []


def _arguments(options: Dict[str, Any]) -> list:
    """{"hold_out": ["source=x", "source=y"], "epochs": 4, "json": True} ->
    ["--hold-out", "source=x,source=y", "--epochs", "4", "--json"]."""
    args = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(map(str, value))]
        elif isinstance(value, dict):
            args += [flag, ",".join(f"{k}={v}" for k, v in value.items())]
        else:
            args += [flag, str(value)]
    return args


def _run(args: list, timeout: Optional[float]) -> Dict[str, Any]:
    done = subprocess.run([cli_path()] + args + ["--json"], capture_output=True, text=True, timeout=timeout,
                          check=False)
    if done.returncode != 0:
        raise errors.Error(f"semroute {args[0]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}",
                           errors.Code.INVALID_ARGUMENT if done.returncode == 2 else errors.Code.INTERNAL)
    return json.loads(done.stdout)


def _files(data: Files) -> str:
    if isinstance(data, (str, os.PathLike)):
        return str(data)
    return ",".join(map(str, data))


def train(task: str, data: Files, out: Union[str, os.PathLike], timeout: Optional[float] = None,
          **options) -> Dict[str, Any]:
    """`semroute train --task TASK --data DATA --out OUT [options]`; returns
    its JSON summary. Options are the tool's flags with underscores, e.g.
    base="models/multitask/base", lora=16, epochs=4, hold_out=["source=x"],
    map_labels={"ADDRESS": "STREET_ADDRESS"}, checkpoint_dir="ckpt"."""
    return _run(["train", "--task", task, "--data", _files(data), "--out", str(out)] + _arguments(options), timeout)


def calibrate(model_dir: Union[str, os.PathLike], timeout: Optional[float] = None, **options) -> Dict[str, Any]:
    """`semroute calibrate MODEL_DIR [options]`: scores, fits the temperature,
    picks an alarm threshold (alarm_label, max_false_alarms); returns the
    evaluation (also written to MODEL_DIR/evaluation.json)."""
    return _run(["calibrate", str(model_dir)] + _arguments(options), timeout)
