"""Training and calibration through the command-line tool."""

import json

import pytest

import semroute
from conftest import TOKENIZER


def test_train_then_load_and_calibrate(tmp_path):
    # Separable rows (the two labels share no word but the numbers): 20 steps
    # learn them (probability 1.0000 on each of ten seeds tried), so texts
    # that are not rows have a known answer.
    rows = [{"text": f"what is {i} plus {i}?", "label": "math"} for i in range(20)] + \
           [{"text": f"is contract {i} binding?", "label": "law"} for i in range(20)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = semroute.train("sequence", data, tmp_path / "model", preset="tiny", tokenizer=TOKENIZER,
                             max_steps=20, batch_size=8, lr=3e-3, seed=3)
    assert summary["task"] == "sequence" and sorted(summary["labels"]) == ["law", "math"]
    with semroute.Model(tmp_path / "model") as model:
        assert sorted(model.labels) == ["law", "math"]
        assert model.classify("what is 31 plus 5?").label == "math"
        assert model.classify("is contract 45 binding?").label == "law"
    evaluation = semroute.calibrate(tmp_path / "model")
    assert "parts" in evaluation and (tmp_path / "model/evaluation.json").exists()


def test_train_errors_carry_the_tool_message(tmp_path):
    with pytest.raises(semroute.Error) as caught:
        semroute.train("sequence", tmp_path / "missing.jsonl", tmp_path / "out", preset="tiny", tokenizer=TOKENIZER)
    assert "missing.jsonl" in str(caught.value)
