"""The model corpus at small resolution, on the CPU: the tiny architectures of
tests/support/corpus_models.py (ResNet, ResNeXt, DenseNet, Inception, SqueezeNet,
ShuffleNetV2, MobileNetV3, EfficientNet, ConvNeXt, ViT, GPT-2, RoBERTa, U-Net), written in torch
alone, each exported to ONNX in memory as bench/models.py exports.

For each: the imported graph module and the op-level module of the default pipeline (f32)
compute what onnxruntime computes, within f32 rounding; the lowering of `boltc --emit
cutlass` (f16, heuristic kernels; no nvcc) verifies and stays within f16 rounding. Through
torch.export (the PyTorch frontend) the graph module computes what PyTorch computes.
bench/corpus.py runs the same models on the GPU (`--models tiny`)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the corpus models are torch modules: pip install boltir[torch]")
ort = pytest.importorskip("onnxruntime")

import boltir
from boltir.accuracy import relative_l2
from boltir.compiler import lower
from boltir.dialects import cutlass, graph
from boltir.frontends.onnx import import_model
from boltir.frontends.torch import import_module
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes
from tests.support.corpus_models import TINY_MODELS, export_onnx

F32_BOUND, F16_BOUND = 1e-5, 2e-2
"""Relative L2 error: the f32 modules against onnxruntime / PyTorch; the f16 lowering."""

XFAIL: dict[str, str] = {}
"""name -> why it fails (strict xfail)."""


def cases(names=TINY_MODELS):
    return [pytest.param(name, marks=pytest.mark.xfail(reason=XFAIL[name], strict=True)) if name in XFAIL else name
            for name in names]


@pytest.fixture(scope="module")
def exported():
    """name -> (ONNX model, numpy inputs, onnxruntime's output), built once per module."""
    memo = {}

    def get(name: str):
        if name not in memo:
            model, inputs = TINY_MODELS[name]()
            proto = export_onnx(model, inputs)
            feeds = {k: v.numpy() for k, v in inputs.items()}
            session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
            memo[name] = proto, feeds, session.run(None, feeds)[0]
        return memo[name]

    return get


def assert_close(got, expected, bound: float, what: str) -> None:
    error = relative_l2(np.asarray(got, np.float32), expected)
    assert error <= bound, f"{what}: ‖Δ‖/‖ref‖ = {error:.3g} > {bound:.0e}"


@pytest.mark.parametrize("name", cases())
def test_onnx_import_and_op_level_match_onnxruntime(name, exported):
    proto, feeds, expected = exported(name)
    module = import_model(proto)
    (got,) = boltir.interp.run(module, feeds)
    assert_close(got, expected, F32_BOUND, "the imported graph")
    op_level = module.clone()
    run_passes(op_level, parse_pipeline_spec(default_pipeline(dtype="f32"), available_passes()), boltir.make_context())
    assert not any(isinstance(op, graph.GraphOp) for op in op_level.walk())
    (got,) = boltir.interp.run(op_level, feeds)
    assert_close(got, expected, F32_BOUND, "the op-level module")


@pytest.mark.parametrize("name", cases())
def test_emit_cutlass_lowering_matches_onnxruntime_in_f16(name, exported):
    """What `boltc --emit cutlass` writes (default pipeline at f16, select-kernels with the
    heuristic, lower-op-to-cutlass, plan-memory): every GEMM and conv a template instance
    or a plain kernel, computing the model within f16 rounding."""
    proto, feeds, expected = exported(name)
    lowered = lower(proto, arch="sm90", dtype="f16", selector="heuristic").module
    boltir.verify_module(lowered)
    assert any(isinstance(op, cutlass.TemplateOp) for op in lowered.walk())
    (got,) = boltir.interp.run(lowered, feeds)
    assert_close(got, expected, F16_BOUND, "the cutlass-level module at f16")


@pytest.mark.parametrize("name", cases())
def test_torch_export_matches_pytorch(name):
    import torch

    model, inputs = TINY_MODELS[name]()
    module = import_module(model, tuple(inputs.values()))
    with torch.no_grad():
        expected = model(*inputs.values()).numpy()
    (got,) = boltir.interp.run(module, {n: v.numpy() for n, v in zip(input_names(module), inputs.values(), strict=True)})
    assert_close(got, expected, F32_BOUND, "the graph module from torch.export")


def input_names(module) -> list[str]:
    from boltir.interp import find_entry
    from boltir.interp import input_names as names

    return names(find_entry(module))


def test_the_corpus_has_its_ten_architectures():
    assert len(TINY_MODELS) >= 10
