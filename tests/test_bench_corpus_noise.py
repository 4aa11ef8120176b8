"""`bench.corpus --lower-only --noise` measures a model's own f16 rounding noise on the CPU
(the f16 interpreter computing in f32 against f64) and sets it against the criterion's bar."""

import re
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")


def test_the_noise_of_a_tiny_model_is_measured_and_set_against_the_bar(tmp_path, monkeypatch, capsys):
    from bench import corpus

    monkeypatch.setattr(sys, "argv", ["corpus", "--models", "tiny_resnet", "--lower-only", "--noise", "--frontends", "onnx",
                                      "--work", str(tmp_path), "--results", str(tmp_path / "rows.jsonl")])
    assert corpus.main() == 0
    out = capsys.readouterr().out
    noise = re.search(r"f16 noise (\S+), (under|OVER) the 5e-03 bar", out)
    assert noise, out[-2000:]
    assert 0 <= float(noise.group(1)) < 5e-3 and noise.group(2) == "under"  # a model this small may round alike
    assert "the f16 noise under the bar on 1/1" in out
