"""Fixtures: the repository's default models, tiny models made by the CLI,
and the CLI's answers, which the package's must equal (same models, 1e-5)."""

import json
import os
import pathlib
import subprocess

import pytest

import semroute

REPO = pathlib.Path(os.environ.get("SEMROUTE_REPO", pathlib.Path(__file__).resolve().parents[3]))
TOKENIZER = REPO / "tests/data/tokenizers/modernbert/tokenizer.json"
TOLERANCE = 1e-5


def run_cli(*args, ok_codes=(0,)) -> str:
    done = subprocess.run([semroute.cli_path(), *map(str, args)], capture_output=True, text=True, check=False)
    assert done.returncode in ok_codes, f"semroute {' '.join(map(str, args))}: {done.stderr}"
    return done.stdout


def cli_json(*args, ok_codes=(0,)):
    return json.loads(run_cli(*args, "--json", ok_codes=ok_codes))


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> pathlib.Path:
    """Tiny random-weight models: an intent classifier (also embeds), an
    entity model, a pair scorer, a Vela 2.0 decision package and a
    hallucination detector."""
    d = tmp_path_factory.mktemp("models")
    run_cli("make-model", "tiny", d / "intent", "--labels", "math,law,biology,other", "--tokenizer", TOKENIZER)
    run_cli("make-model", "tiny", d / "pii", "--token-labels", "O,B-EMAIL,I-EMAIL,B-PERSON,I-PERSON", "--seed", 7,
            "--tokenizer", TOKENIZER)
    run_cli("make-model", "tiny", d / "reranker", "--pair-scorer", "--seed", 9, "--tokenizer", TOKENIZER)
    run_cli("make-model", "tiny", d / "vela2", "--vela2", "both", "--max-length", 512, "--seed", 31, "--tokenizer",
            TOKENIZER)
    run_cli("make-model", "tiny", d / "halluc", "--token-labels", "SUPPORTED,HALLUCINATED", "--seed", 5,
            "--tokenizer", TOKENIZER)
    return d


@pytest.fixture(scope="session")
def domain(repo):
    with semroute.Model(repo / "models/domain") as model:
        yield model


@pytest.fixture(scope="session")
def pii(repo):
    with semroute.Model(repo / "models/pii") as model:
        yield model
