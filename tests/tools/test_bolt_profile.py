"""bolt-profile: a compiled model's launches timed on the GPU against their bounds. On the
CPU: every user-facing error is one line, and the inputs come from the manifest."""

from __future__ import annotations

import json

import numpy as np
import pytest

from boltir.diagnostics import BoltError
from boltir.manifest import TensorSpec
from boltir.tools import bolt_profile

SPECS = [TensorSpec("image", (2, 3, 8, 8), "f16"), TensorSpec("ids", (2, 5), "i64"), TensorSpec("mask", (2, 5), "i1")]


def run(argv, capsys) -> tuple[int, str]:
    code = bolt_profile.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.err.strip()


def test_random_inputs_follow_the_manifest():
    inputs = bolt_profile.profile_inputs(SPECS, {}, seed=3)
    assert [(k, v.shape, v.dtype) for k, v in inputs.items()] == [
        ("image", (2, 3, 8, 8), np.float16), ("ids", (2, 5), np.int64), ("mask", (2, 5), np.bool_)]
    assert 0 <= inputs["ids"].min() and inputs["ids"].max() < 8
    again = bolt_profile.profile_inputs(SPECS, {}, seed=3)
    assert all(np.array_equal(inputs[k], again[k]) for k in inputs)


def test_given_inputs_are_kept_and_checked():
    image = np.ones((2, 3, 8, 8), np.float16)
    assert bolt_profile.profile_inputs(SPECS, {"image": image}, seed=0)["image"] is image
    with pytest.raises(BoltError, match=r"input 'image' is float32\[2, 3, 8, 8\] in --inputs, the model takes f16\[2, 3, 8, 8\]"):
        bolt_profile.profile_inputs(SPECS, {"image": image.astype(np.float32)}, seed=0)
    with pytest.raises(BoltError, match=r"--inputs has 'label', which is not an input of the model \(its inputs: image, ids, mask\)"):
        bolt_profile.profile_inputs(SPECS, {"label": image}, seed=0)


def test_a_directory_that_is_not_a_model(tmp_path, capsys):
    code, err = run([tmp_path], capsys)
    assert code == 1 and err == f"error: '{tmp_path}' is not a compiled boltir model: no manifest.json (boltc MODEL -o DIR writes one)"


def test_a_bucketed_build_says_how_to_profile_one_size(tmp_path, capsys):
    (tmp_path / "manifest.json").write_text(json.dumps({"buckets": [], "inputs": []}))
    code, err = run([tmp_path], capsys)
    assert code == 1 and "is a bucketed build" in err and "--input-shape" in err and "\n" not in err


def test_a_manifest_without_its_library_is_one_line(tmp_path, capsys):
    manifest = {"inputs": [{"name": "x", "shape": [1, 4], "dtype": "f32"}], "outputs": [], "library": "libmodel.so",
                "arch": "sm90", "dtype": "f32"}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    code, err = run([tmp_path], capsys)
    assert code == 1 and err.startswith(f"error: cannot load {tmp_path / 'libmodel.so'}") and "\n" not in err


def test_bad_numbers_and_a_bad_inputs_file(tmp_path, capsys):
    with pytest.raises(SystemExit):
        bolt_profile.main([str(tmp_path), "--repeats", "0"])
    assert "must be 1 or more, got 0" in capsys.readouterr().err
    (tmp_path / "manifest.json").write_text(json.dumps({"inputs": [], "outputs": []}))
    code, err = run([tmp_path, "--inputs", tmp_path / "missing.npz"], capsys)
    assert code == 1 and err == f"error: cannot read inputs '{tmp_path / 'missing.npz'}': no such file"


@pytest.mark.gpu
@pytest.mark.slow
def test_on_the_gpu_prints_every_launch_and_the_families(small_resnet, tmp_path, capsys):
    from boltir import compiler

    result = compiler.compile(small_resnet / "small_resnet.onnx", tmp_path / "out", arch="sm80", dtype="f16", progress=False)
    plot = tmp_path / "roofline.png"
    assert bolt_profile.main([str(result.directory), "--alone", "--marginal", "--repeats", "5", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out.splitlines()
    launches = len(result.manifest["launches"])
    assert out[0].startswith(f"{result.directory}: {launches} launches, sm80 f16")
    assert out[1].split()[:5] == ["#", "ms", "alone", "marginal", "share"]
    assert any(line.startswith(f"{launches} launches, ") and "; marginal " in line for line in out)
    assert any(line.split()[:3] == ["family", "launches", "ms"] for line in out)
    assert out[-1] == f"wrote {plot}" and plot.stat().st_size > 0
