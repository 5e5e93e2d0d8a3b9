"""Errors carry the C API's stable codes; handles free once and refuse
calls after close()."""

import pytest

import semroute
from semroute import Code


def test_missing_model_is_not_found(tmp_path):
    with pytest.raises(semroute.NotFound) as caught:
        semroute.Model(tmp_path / "nowhere")
    assert caught.value.code == Code.NOT_FOUND and caught.value.code_name == "not_found"
    assert isinstance(caught.value, semroute.Error) and isinstance(caught.value, LookupError)
    assert "nowhere" in str(caught.value)


def test_malformed_model_is_invalid_model(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    (tmp_path / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    with pytest.raises(semroute.Error) as caught:
        semroute.Model(tmp_path)
    assert caught.value.code in (Code.INVALID_MODEL, Code.INVALID_ARGUMENT)


def test_invalid_utf8(domain):
    with pytest.raises(semroute.InvalidUTF8) as caught:
        domain.classify(b"bad \xff byte")
    assert caught.value.code == Code.INVALID_UTF8 == 5
    with pytest.raises(semroute.InvalidUTF8):
        domain.classify("lone surrogate \ud800")
    assert domain.classify(b"valid bytes").label in domain.labels


def test_too_long_when_overflow_is_rejected(repo):
    with semroute.Model(repo / "models/domain", max_length=8, overflow="reject") as model:
        with pytest.raises(semroute.TooLong) as caught:
            model.classify("a sentence that is clearly longer than eight tokens in all")
        assert caught.value.code == Code.TOO_LONG
        assert model.classify("short").input.processed_tokens <= 8


def test_bad_arguments(repo, domain, pii):
    with pytest.raises(semroute.InvalidArgument):
        semroute.Model(repo / "models/domain", truncation="middle")
    with pytest.raises(semroute.InvalidArgument):
        domain.classify_batch("one text, not a list")
    with pytest.raises(semroute.InvalidArgument):
        domain.classify(42)
    with pytest.raises(semroute.Error):
        pii.classify("a token model has no sequence answer")
    with pytest.raises(semroute.Error):
        semroute.Model(repo / "models/domain", dtype="float7")
    assert domain.classify_batch([]) == []


def test_close_is_idempotent_and_final(repo):
    model = semroute.Model(repo / "models/domain")
    with model:
        assert model.classify("x").label
    assert model.closed
    model.close()
    with pytest.raises(semroute.Closed) as caught:
        model.classify("after close")
    assert caught.value.code == Code.INVALID_ARGUMENT


def test_unknown_codes_survive():
    error = semroute.Error("from a newer library", 42)
    assert error.code == 42 and error.code_name == "code(42)"


def _import_in_subprocess(env):
    import os
    import subprocess
    import sys
    code = "import semroute; print(semroute.version())"
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                          check=False)


def test_the_library_is_found_by_the_dynamic_loader():
    import os
    from semroute.training import _loaded_library_paths
    library = _loaded_library_paths()[0]
    env = {"SEMROUTE_LIBRARY": "", "LD_LIBRARY_PATH": os.path.dirname(library)}
    done = _import_in_subprocess(env)
    assert done.returncode == 0 and done.stdout.strip() == semroute.version(), done.stderr


def test_a_wrong_library_path_is_a_clear_import_error(tmp_path):
    done = _import_in_subprocess({"SEMROUTE_LIBRARY": str(tmp_path / "libsemroute.so.0")})
    assert done.returncode != 0 and "SEMROUTE_LIBRARY" in done.stderr and "ImportError" in done.stderr
