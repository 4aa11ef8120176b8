"""torch.compile(model, backend="boltir") and boltir.compile_module on the CPU: the FX graph
goes through the PyTorch importer and the pipeline for real; building the library and
running it on the GPU are replaced by the op-level interpreter (tests/test_users_path_gpu.py
runs the real thing)."""

from __future__ import annotations

import importlib.metadata
import json
import logging
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from boltir import torch_backend  # noqa: E402
from boltir.diagnostics import BoltError  # noqa: E402


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 4)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.head(y.mean((2, 3)))


class Lowered:
    """A stand-in for a compiled model: the op-level module, run by the interpreter."""

    def __init__(self, module, dtype):
        from boltir.compiler import lower
        from boltir.ir import find_entry, input_names
        from boltir.pipelines import default_pipeline

        self.graph_module = module.clone()
        self.lowered = lower(module, arch="sm90", dtype=dtype, pipeline=default_pipeline(dtype=dtype, arch="sm90"))
        self.names = input_names(find_entry(self.lowered.module))

    def __call__(self, *tensors):
        from boltir.interp import run

        outputs = run(self.lowered.module, {n: t.numpy() for n, t in zip(self.names, tensors)})
        return [torch.from_numpy(np.ascontiguousarray(out)) for out in outputs]


class Bucketed:
    """A stand-in for a bucketed model: every bucket lowered (boltir.buckets), a call
    dispatched, padded and sliced as the runtime does it, run by the interpreter."""

    def __init__(self, importer, input_shapes, dtype):
        from boltir.buckets import lower_buckets

        self.input_shapes = input_shapes
        self.lowering = lower_buckets(importer, input_shapes=input_shapes, arch="sm90", dtype=dtype)

    def __call__(self, *tensors):
        from boltir.buckets import run_interpreted

        outputs = run_interpreted(self.lowering, {n: t.numpy() for n, t in zip(self.input_shapes, tensors)})
        return [torch.from_numpy(np.ascontiguousarray(out)) for out in outputs]


@pytest.fixture
def builds(monkeypatch, tmp_path):
    """Replaces compile_or_load(): every build is recorded, lowered and run by the interpreter."""
    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path / "cache"))
    made = []

    def fake_build(import_graph, key, settings, dtype):
        model = Lowered(import_graph(), dtype)
        made.append((key, settings, dtype, model))
        return model

    def fake_buckets(importer, input_shapes, key, settings, dtype):
        model = Bucketed(importer, input_shapes, dtype)
        made.append((key, settings, dtype, model))
        return model

    monkeypatch.setattr(torch_backend, "compile_or_load", fake_build)
    monkeypatch.setattr(torch_backend, "compile_buckets_or_load", fake_buckets)
    monkeypatch.setattr(torch_backend, "_loaded", {})
    # Something configured earlier in the session (logging.config's
    # disable_existing_loggers, a handler of its own) may have silenced "boltir" for
    # caplog, which reads the root's records; these tests read its lines.
    monkeypatch.setattr(logging.getLogger("boltir"), "disabled", False)
    monkeypatch.setattr(logging.getLogger("boltir"), "propagate", True)
    torch._dynamo.reset()
    yield made
    torch._dynamo.reset()


def test_the_entry_point_is_registered():
    entry_points = importlib.metadata.entry_points(group="torch_dynamo_backends")
    assert [e.value for e in entry_points if e.name == "boltir"] == ["boltir.torch_backend:boltir_backend"]
    assert "boltir" in torch._dynamo.list_backends()


def test_torch_compile_lowers_the_graph_with_frozen_weights(builds):
    torch.manual_seed(0)
    model = SmallNet().eval()
    x = torch.randn(2, 3, 8, 8)
    fast = torch.compile(model, backend="boltir")
    with torch.no_grad():
        got, expected = fast(x), model(x)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    [(_, settings, dtype, lowered)] = builds
    assert dtype == "f32" and settings == torch_backend.Settings()  # the model's own precision
    # the weights are constants: @main takes the image alone, and the BatchNorm is folded
    from boltir.ir import find_entry

    assert len(find_entry(lowered.graph_module).function_type.inputs) == 1
    assert "graph.batch_norm" in str(lowered.graph_module)
    assert lowered.lowered.statistics.counters["fold-batchnorm"]
    assert not re.search(r"\b(graph|op)\.batch_norm\b", str(lowered.lowered.module))
    fast(x)  # the same shapes (dynamo compiles again for the grad mode): no new build
    with torch.no_grad():
        fast(x)
    assert len(builds) == 1
    with torch.no_grad():
        fast(torch.randn(1, 3, 8, 8))  # new shapes: one more
    assert len(builds) == 2


def test_options_pass_through(builds):
    model = SmallNet().eval()
    fast = torch.compile(model, backend="boltir", options={"dtype": "f16", "arch": "sm80", "tune": False})
    with torch.no_grad():
        got, expected = fast(torch.ones(1, 3, 8, 8)), model(torch.ones(1, 3, 8, 8))
    [(_, settings, dtype, _)] = builds
    assert (settings.arch, dtype) == ("sm80", "f16")
    assert got.dtype == torch.float32  # the interface keeps the model's types
    torch.testing.assert_close(got, expected, rtol=2e-2, atol=2e-2)


def test_unknown_options_are_one_line():
    with pytest.raises(BoltError, match="unknown boltir option 'dtpye'; the options are arch, cutlass, dtype, keep_f32, max_size, tune, weights"):
        torch_backend.Settings.of({"dtpye": "f16"})
    with pytest.raises(BoltError, match="option dtype='f8'"):
        torch_backend.Settings.of({"dtype": "f8"})
    with pytest.raises(BoltError, match="option arch='sm70'"):
        torch_backend.Settings.of({"arch": "sm70"})
    with pytest.raises(BoltError, match="option max_size=0: expected a whole number of 1 or more"):
        torch_backend.Settings.of({"max_size": 0})


class Sorting(torch.nn.Module):
    def forward(self, x):
        return torch.sort(x + 1, dim=-1).values * 2


def test_an_unsupported_op_runs_in_pytorch_with_one_line(builds, caplog):
    fast = torch.compile(Sorting(), backend="boltir")
    x = torch.randn(3, 5)
    with caplog.at_level(logging.WARNING, logger="boltir"):
        got = fast(x)
        fast(x)
    torch.testing.assert_close(got, Sorting()(x))
    lines = [r.getMessage() for r in caplog.records if r.name == "boltir"]
    assert len(lines) == 1 and "aten.sort" in lines[0] and "runs in PyTorch" in lines[0], lines
    assert builds == []


def test_changed_weights_are_caught_when_asked(builds, caplog):
    model = SmallNet().eval()
    x = torch.randn(1, 3, 8, 8)
    fast = torch.compile(model, backend="boltir", options={"weights": "check"})
    with torch.no_grad():
        fast(x)
        model.head.bias.add_(1.0)
        with caplog.at_level(logging.WARNING, logger="boltir"):
            got = fast(x)
        torch.testing.assert_close(got, model(x), rtol=1e-4, atol=1e-5)
    assert len(builds) == 2 and "weights changed" in caplog.text


def test_the_cache_key_follows_shapes_weights_and_options():
    weights = [torch.ones(3)]
    key = torch_backend.digest(["code", ((1, 3),), torch_backend.Settings(), "f32"], weights)
    assert key == torch_backend.digest(["code", ((1, 3),), torch_backend.Settings(), "f32"], [torch.ones(3)])
    assert key != torch_backend.digest(["code", ((2, 3),), torch_backend.Settings(), "f32"], weights)
    assert key != torch_backend.digest(["code", ((1, 3),), torch_backend.Settings(), "f32"], [torch.full((3,), 2.0)])
    assert key != torch_backend.digest(["code", ((1, 3),), torch_backend.Settings(tune=True), "f32"], weights)
    assert torch_backend.digest([], [torch.ones(2, dtype=torch.bfloat16), torch.zeros(2, dtype=torch.bool)])


def test_a_build_is_cached_on_disk(monkeypatch, tmp_path):
    from boltir import compiler, runtime

    monkeypatch.setenv("BOLTIR_CACHE_DIR", str(tmp_path))
    compiles, imports = [], []

    def fake_compile(module, directory, **options):
        compiles.append(options)
        (directory / "manifest.json").write_text(json.dumps({"fake": True}))

    monkeypatch.setattr(compiler, "compile", fake_compile)
    monkeypatch.setattr(runtime, "load", lambda directory: ("loaded", directory))
    monkeypatch.setattr(torch_backend, "_loaded", {})
    monkeypatch.setattr(torch_backend, "local_arch", lambda: "sm90")
    settings = torch_backend.Settings()
    first = torch_backend.build(lambda: imports.append(1), "k1", settings, "f32")
    torch_backend._loaded.clear()  # as a new process: from the disk
    second = torch_backend.build(lambda: imports.append(1), "k1", settings, "f32")
    assert first == second == ("loaded", tmp_path / "compiled" / "k1")
    assert len(compiles) == 1 and len(imports) == 1 and compiles[0]["arch"] == "sm90"
    assert [p.name for p in (tmp_path / "compiled").iterdir()] == ["k1"]  # no temporary left


def test_compile_module_without_dynamo(builds):
    torch.manual_seed(1)
    model = SmallNet().eval()
    x = torch.randn(2, 3, 8, 8)
    compiled = torch_backend.compile_module(model, (x,))
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    assert builds[0][2] == "f32"
    with pytest.raises(BoltError, match="unsupported ATen op aten.sort"):
        torch_backend.compile_module(Sorting(), (torch.randn(3, 5),))


def test_boltir_compile_module_is_the_api():
    import boltir

    assert boltir.compile_module is torch_backend.compile_module


# ------------------------------------------------------- dynamic sizes (issue 19)


def test_dynamic_true_with_max_size_builds_one_bucketed_model(builds, caplog):
    """dynamic=True: the batch (within max_size) gets buckets, the 16-pixel sides (above
    it) stay fixed; calls of three batch sizes run on the one build."""
    torch.manual_seed(2)
    model = SmallNet().eval()
    fast = torch.compile(model, backend="boltir", dynamic=True, options={"max_size": 8})
    with torch.no_grad(), caplog.at_level(logging.WARNING, logger="boltir"):
        for batch in (2, 3, 5, 8):
            x = torch.randn(batch, 3, 16, 16)
            torch.testing.assert_close(fast(x), model(x), rtol=1e-4, atol=1e-5)
    [(_, settings, dtype, bucketed)] = builds
    assert settings.max_size == 8 and dtype == "f32"
    from boltir.shape_ranges import DimRange

    [shape] = bucketed.input_shapes.values()
    assert shape == (DimRange(1, 8), 3, 16, 16)
    assert [b.bucket.sizes for b in bucketed.lowering.buckets] == [(1,), (2,), (4,), (8,)]
    assert not [r for r in caplog.records if r.name == "boltir"]


def test_a_call_outside_the_buckets_compiles_on_its_own(builds):
    model = SmallNet().eval()
    fast = torch.compile(model, backend="boltir", dynamic=True, options={"max_size": 4})
    with torch.no_grad():
        fast(torch.randn(2, 3, 16, 16))
        x = torch.randn(6, 3, 16, 16)  # above max_size
        torch.testing.assert_close(fast(x), model(x), rtol=1e-4, atol=1e-5)
    assert [type(b[3]).__name__ for b in builds] == ["Bucketed", "Lowered"]


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = torch.nn.Linear(20, 32), torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.second(torch.relu(self.first(x)))


def test_dynamic_without_max_size_says_how_and_compiles_each_size(builds, caplog):
    """dynamo's range for the batch is open-ended: one line says how to bound it."""
    model = Mlp().eval()
    fast = torch.compile(model, backend="boltir", dynamic=True)
    with torch.no_grad(), caplog.at_level(logging.WARNING, logger="boltir"):
        for batch in (2, 3):
            x = torch.randn(batch, 20)
            torch.testing.assert_close(fast(x), model(x), rtol=1e-4, atol=1e-5)
    lines = [r.getMessage() for r in caplog.records if r.name == "boltir"]
    assert len(lines) == 1 and "input 'x' dimension 0 is dynamic; options={'max_size': N}" in lines[0], lines
    assert [type(b[3]).__name__ for b in builds] == ["Lowered", "Lowered"]


def test_a_bound_from_mark_dynamic_needs_no_option(builds):
    model = SmallNet().eval()
    x = torch.randn(3, 3, 16, 16)
    torch._dynamo.mark_dynamic(x, 0, min=2, max=6)
    fast = torch.compile(model, backend="boltir")
    with torch.no_grad():
        torch.testing.assert_close(fast(x), model(x), rtol=1e-4, atol=1e-5)
    [(_, _, _, bucketed)] = builds
    assert next(iter(bucketed.input_shapes.values()))[0].high == 6


class RowMixer(torch.nn.Module):
    def forward(self, x):
        return x * x.sum(0, keepdim=True)


def test_a_model_that_mixes_rows_is_not_bucketed(builds, caplog):
    fast = torch.compile(RowMixer(), backend="boltir", dynamic=True, options={"max_size": 8})
    x = torch.randn(3, 20)
    with caplog.at_level(logging.WARNING, logger="boltir"):
        torch.testing.assert_close(fast(x), RowMixer()(x), rtol=1e-5, atol=1e-5)
    lines = [r.getMessage() for r in caplog.records if r.name == "boltir"]
    assert len(lines) == 1 and "cannot be bucketed" in lines[0] and "each new size compiles on its own" in lines[0], lines
    assert [type(b[3]).__name__ for b in builds] == ["Lowered"]


def test_a_module_float_attribute_is_frozen_whatever_dynamo_calls_the_module():
    """Under dynamic=True a BatchNorm's eps arrives as a one-element tensor whose source is
    an attribute of L['self'] (torch 2.13) or of L['fn'] (torch 2.11's module wrapper)."""
    from types import SimpleNamespace as Source

    for root in ("self", "fn"):
        eps = Source(base=Source(base=Source(local_name=root), member="bn"), member="eps")
        assert torch_backend._module_attribute(eps)
    assert not torch_backend._module_attribute(Source(local_name="x"))  # an input itself
    assert not torch_backend._module_attribute(Source(base=Source(local_name="inputs"), index=0))
