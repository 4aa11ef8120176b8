"""boltir.compile / boltc -o: a whole model to a directory (library, weights, manifest),
and boltir.runtime.load on it. The build tests compile for real with nvcc (slow); the
run tests need a GPU (marked, skipped here with the reason)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boltir.diagnostics import BoltError



def _toolchain_or_skip():
    from boltir.backends.cuda.toolchain import nvcc

    try:
        nvcc.Toolchain.find()
    except BoltError as error:
        pytest.skip(f"no CUDA toolchain here: {error}")



@pytest.fixture(scope="module")
def compiled(small_resnet) -> Path:
    _toolchain_or_skip()
    from boltir.tools.boltc import main

    out = small_resnet / "out"
    assert main([str(small_resnet / "small_resnet.onnx"), "-o", str(out), "--arch", "sm80"]) == 0
    return out


@pytest.mark.slow
def test_the_directory_holds_library_weights_and_manifest(compiled):
    assert (compiled / "libmodel.so").is_file() and (compiled / "weights.bin").is_file()
    manifest = json.loads((compiled / "manifest.json").read_text())
    assert manifest["inputs"] == [{"name": "image", "shape": [1, 3, 32, 32], "dtype": "f32"}]
    assert manifest["outputs"] == [{"name": "logits", "shape": [1, 10], "dtype": "f32"}]
    assert manifest["arch"] == "sm80" and manifest["dtype"] == "f16"
    assert manifest["pipeline"].startswith("canonicalize,") and manifest["pipeline"].endswith("plan-memory")
    families = [launch["family"] for launch in manifest["launches"]]
    # the 16-channel convs run on our few-channel kernel (stem_conv), the others on CUTLASS
    assert families.count("conv2d_fprop") + families.count("stem_conv") == 6 and "stem_conv" in families
    assert {"gemm", "skinny_gemm"} & set(families)
    assert not any(launch["fallback"] for launch in manifest["launches"])
    assert manifest["weights_bytes"] == (compiled / "weights.bin").stat().st_size
    assert 0 < manifest["arena_bytes"]


@pytest.mark.slow
def test_loading_without_a_gpu_says_so(compiled):
    from boltir.runtime import load

    try:
        import torch

        if torch.cuda.is_available():
            pytest.skip("there is a GPU here")
    except ImportError:
        pass
    from boltir.cuda_driver import driver_present

    expected = "no usable GPU here .*boltir.interp.run" if driver_present() else "no NVIDIA driver found .*boltir.interp.run"
    with pytest.raises(BoltError, match=expected):
        load(compiled)


def test_loading_a_directory_that_is_not_a_model(tmp_path):
    from boltir.runtime import load

    with pytest.raises(BoltError, match="is not a compiled boltir model: no manifest.json"):
        load(tmp_path)


def test_loading_a_model_whose_manifest_does_not_parse(tmp_path):
    from boltir.runtime import load

    (tmp_path / "manifest.json").write_text("{ not json")
    with pytest.raises(BoltError, match=r"^error: cannot read '.*manifest.json': Expecting property name"):
        load(tmp_path)


def test_boltc_needs_an_output_directory(small_resnet, capsys):
    from boltir.tools.boltc import main

    assert main([str(small_resnet / "small_resnet.onnx")]) == 1
    assert "compiling needs an output directory: boltc MODEL.onnx -o DIR" in capsys.readouterr().err


def test_emit_cutlass_and_cuda(small_resnet, tmp_path, capsys):
    from boltir.tools.boltc import main

    assert main([str(small_resnet / "small_resnet.onnx"), "--emit", "cutlass", "--elide-weights"]) == 0
    text = capsys.readouterr().out
    # 16-channel convs stay op.conv2d with our few-channel kernel's choice; the rest are CUTLASS's
    assert text.count("= cutlass.conv2d_fprop ") + text.count("= op.conv2d ") == 6 and "arena_bytes" in text
    assert main([str(small_resnet / "small_resnet.onnx"), "--emit", "cuda", "-o", str(tmp_path / "cuda")]) == 0
    units = sorted(p.name for p in (tmp_path / "cuda").iterdir())
    assert "host.cu" in units and any(u.startswith("boltir_conv2d_fprop_") for u in units)
    host = (tmp_path / "cuda/host.cu").read_text()
    assert 'extern "C" int boltir_model_run(' in host and 'extern "C" int boltir_model_capture(' in host


@pytest.mark.gpu
def test_runs_and_matches_the_interpreter(compiled, small_resnet):
    from boltir.frontends.onnx import import_model
    from boltir.interp import run
    from boltir.runtime import load

    image = np.load(small_resnet / "input.npz")["image"]
    (expected,) = run(import_model(small_resnet / "small_resnet.onnx"), {"image": image})
    model = load(compiled)
    (got,) = model(image=image)
    assert np.linalg.norm(got - expected) / np.linalg.norm(expected) < 1e-2
    # and correct by boltir.accuracy's criterion: the same-precision reference is the
    # interpreter at f16 on the op-level module of this build, which is also an ONNX
    # file's own f16 run
    from boltir.accuracy import judge, relative_l2
    from boltir.compiler import lower_model
    from boltir.pipelines import default_pipeline

    op_level, _, _ = lower_model(small_resnet / "small_resnet.onnx", arch="sm80", dtype="f16",
                                 pipeline=default_pipeline(dtype="f16", arch="sm80"))
    (at_f16,) = run(op_level, {"image": image})
    verdict = judge(got, expected, at_f16, framework_error=relative_l2(at_f16, expected))
    assert verdict.correct, verdict.cell()
    with pytest.raises(BoltError, match=r"input 'image' must be f32\[1, 3, 32, 32\], got f32\[1, 3, 32, 31\]"):
        model(image=image[..., :31])
    with pytest.raises(BoltError, match="unknown input 'img'"):
        model(img=image)
    debug = load(compiled, debug=True)
    (again,) = debug(image=image)
    np.testing.assert_allclose(again, got, rtol=0, atol=0)
    assert 0.0 <= debug.last_launch_error <= 1e-2  # the largest launch's own error against the interpreter


@pytest.mark.gpu
def test_profile_times_every_launch(compiled, small_resnet):
    from boltir.runtime import format_profile, load

    image = np.load(small_resnet / "input.npz")["image"]
    model = load(compiled)
    launches = model.profile(image=image, repeats=5)
    manifest = json.loads((compiled / "manifest.json").read_text())
    assert [t.kernel for t in launches] == [launch["kernel"] for launch in manifest["launches"]]
    assert all(t.ms > 0 for t in launches)
    table = format_profile(launches, top=3)
    assert table.count("\n") == 4 and f"{len(launches)} launches" in table
    (got,) = model(image=image)  # profiling leaves the model usable
    assert np.isfinite(got).all()


@pytest.mark.slow
def test_the_python_api_writes_the_same_directory(compiled, small_resnet, tmp_path):
    """boltir.compile is boltc -o (and reuses its objects: a warm build)."""
    import boltir

    result = boltir.compile(small_resnet / "small_resnet.onnx", tmp_path / "api", arch="sm80", dtype="f16", progress=False)
    assert result.fallbacks == []
    assert result.compile_fallbacks == [] and result.manifest["compile_fallbacks"] == 0
    ours = json.loads((tmp_path / "api/manifest.json").read_text())
    theirs = json.loads((compiled / "manifest.json").read_text())
    assert ours["launches"] == theirs["launches"] and ours["pipeline"] == theirs["pipeline"]
    assert (tmp_path / "api/weights.bin").read_bytes() == (compiled / "weights.bin").read_bytes()
