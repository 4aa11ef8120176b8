"""Real topologies through the default pipeline, select-kernels{arch=sm80} and
lower-op-to-cutlass: ResNet-50 (the onnx wheel's light model, weights redrawn) and a
BERT-base encoder (2 layers, hidden 768, 12 heads, sequence 128, built here as an
exporter writes it). Where a template cannot express a fusion the lowering keeps it as a
separate op and counts it; for these models that count, and the count of ops left without
a template, must be zero, and every op-level GEMM, conv and b2b op must become a cutlass
instance the CUDA emitter writes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto

import boltir
from boltir.backends.cuda.codegen.cutlass_kernels import unsupported_reason
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.passes import statistics
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes
from tests.frontends.onnx_models import GraphBuilder
from tests.passes.equivalence import random_inputs, relative_error
from tests.pipeline.topologies import import_light_model

# CUTLASS coverage: our own kernel families (depthwise, batch-1 GEMMs, few-channel convs)
# have their own pipeline tests (test_depthwise_direct, test_skinny_gemm, test_stem_conv).
LOWERING = "select-kernels{selector=heuristic arch=sm80 depthwise=cutlass small_m=cutlass few_channels=cutlass},lower-op-to-cutlass"
OP_LEVEL = (ops.GemmOp, ops.Conv2dOp, ops.B2bGemmOp, ops.B2bConv2dOp)
TOLERANCE = {"f16": 2e-2, "bf16": 5e-2, "f32": 1e-4}

BERT_BASE = {"layers": 2, "hidden": 768, "heads": 12, "ffn": 3072, "seq": 128, "batch": 1}


def bert_encoder_onnx(rng: np.random.Generator, layers: int, hidden: int, heads: int, ffn: int, seq: int, batch: int):
    """BERT encoder layers on given hidden states, as exporters write them: Q, K and V
    linears (MatMul + Add), heads by Reshape and Transpose, scaled masked softmax, the
    output linear and a residual Add before LayerNorm, an erf-GELU feed-forward and a
    second residual Add before LayerNorm. The additive mask comes from a 0/1 mask."""
    g = GraphBuilder(rng, "bert_encoder")
    h = g.input("hidden_states", TensorProto.FLOAT, [batch, seq, hidden])
    mask = g.input("attention_mask", TensorProto.INT64, [batch, seq])
    extended = g.node("Unsqueeze", [mask, g.ints("mask.axes", [1, 2])], name="mask.unsqueeze")
    extended = g.node("Cast", [extended], name="mask.cast", to=TensorProto.FLOAT)
    extended = g.node("Sub", [g.scalar("mask.one", 1.0), extended], name="mask.sub")
    extended = g.node("Mul", [extended, g.scalar("mask.scale", -10000.0)], name="mask.mul")
    head_dim = hidden // heads
    heads_shape = g.ints("heads.shape", [batch, seq, heads, head_dim])
    flat_shape = g.ints("flat.shape", [batch, seq, hidden])
    for index in range(layers):
        p = f"layer{index}"

        def to_heads(x: str, name: str, p: str = p) -> str:
            x = g.node("Reshape", [x, heads_shape], name=f"{p}.{name}.reshape")
            return g.node("Transpose", [x], name=f"{p}.{name}.transpose", perm=[0, 2, 1, 3])

        q = to_heads(g.linear(h, hidden, hidden, f"{p}.query"), "q")
        k = to_heads(g.linear(h, hidden, hidden, f"{p}.key"), "k")
        v = to_heads(g.linear(h, hidden, hidden, f"{p}.value"), "v")
        kt = g.node("Transpose", [k], name=f"{p}.k.transpose_last", perm=[0, 1, 3, 2])
        scores = g.node("MatMul", [q, kt], name=f"{p}.scores")
        scores = g.node("Div", [scores, g.scalar(f"{p}.sqrt_d", math.sqrt(head_dim))], name=f"{p}.scale")
        scores = g.node("Add", [scores, extended], name=f"{p}.mask_add")
        probs = g.node("Softmax", [scores], name=f"{p}.softmax", axis=-1)
        context = g.node("MatMul", [probs, v], name=f"{p}.context")
        context = g.node("Transpose", [context], name=f"{p}.context.transpose", perm=[0, 2, 1, 3])
        context = g.node("Reshape", [context, flat_shape], name=f"{p}.context.reshape")
        attention = g.linear(context, hidden, hidden, f"{p}.attention.output")
        h = g.layer_norm(g.node("Add", [attention, h], name=f"{p}.attention.residual"), hidden, f"{p}.attention.ln")
        up = g.linear(h, hidden, ffn, f"{p}.ffn.up")
        scaled = g.node("Div", [up, g.scalar(f"{p}.gelu.sqrt2", math.sqrt(2.0))], name=f"{p}.gelu.div")
        one_plus = g.node("Add", [g.node("Erf", [scaled], name=f"{p}.gelu.erf"), g.scalar(f"{p}.gelu.one", 1.0)], name=f"{p}.gelu.add")
        half = g.node("Mul", [up, g.scalar(f"{p}.gelu.half", 0.5)], name=f"{p}.gelu.half_x")
        activated = g.node("Mul", [half, one_plus], name=f"{p}.gelu.mul")
        down = g.linear(activated, ffn, hidden, f"{p}.ffn.down")
        h = g.layer_norm(g.node("Add", [down, h], name=f"{p}.ffn.residual"), hidden, f"{p}.ffn.ln")
    return g.model([h], ["last_hidden_state"], [[batch, seq, hidden]])


def attention_mask(rng: np.random.Generator, batch: int, seq: int) -> np.ndarray:
    """Real 0/1 masks (random integers would add multiples of -10000 to the scores)."""
    lengths = rng.integers(seq // 2, seq + 1, batch)
    return (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)


ATTENTION_PASSES = ("recognize-attention", "merge-qkv")


def without_attention_fusion(pipeline: str) -> str:
    """The pipeline with attention left as batched GEMMs and a softmax (as for a model
    whose attention recognize-attention does not read)."""
    return ",".join(p for p in pipeline.split(",") if p not in ATTENTION_PASSES)


def compile_to_cutlass(module, dtype: str, fuse_attention: bool = True):
    """The default pipeline (padded for sm80), then the kernel selection and lowering.
    Returns the op-level module, the lowered one and the lowering's statistics."""
    op_level = module.clone()
    pipeline = default_pipeline(dtype=dtype, arch="sm80")
    pipeline = pipeline if fuse_attention else without_attention_fusion(pipeline)
    run_passes(op_level, parse_pipeline_spec(pipeline, available_passes()), boltir.make_context())
    lowered = op_level.clone()
    with statistics.collecting() as collected:
        run_passes(lowered, parse_pipeline_spec(LOWERING, available_passes()), boltir.make_context())
    return op_level, lowered, collected


def assert_fully_lowered(op_level, lowered, collected) -> list[cutlass.TemplateOp]:
    """Nothing peeled off, nothing left, every instance one the emitter writes."""
    stats = collected.counters.get("lower-op-to-cutlass", {})
    assert stats.get("fusions kept as separate ops", 0) == 0, collected.notes.get("lower-op-to-cutlass")
    assert stats.get("ops without a template", 0) == 0, collected.notes.get("lower-op-to-cutlass")
    assert collected.get("select-kernels", "op.b2b_gemm unfused") == collected.get("select-kernels", "op.b2b_conv2d unfused") == 0
    assert not [op.name for op in lowered.walk() if isinstance(op, OP_LEVEL)]
    instances = [op for op in lowered.walk() if isinstance(op, cutlass.TemplateOp)]
    assert len(instances) == sum(isinstance(op, OP_LEVEL) for op in op_level.walk())
    refused = [(op.name, unsupported_reason(op)) for op in instances if unsupported_reason(op) is not None]
    assert not refused, refused
    assert sum(stats.get(f"{name} instances", 0) for name in {op.name for op in instances}) == len(instances)
    return instances


def assert_same_outputs(op_level, lowered, inputs, tolerance: float) -> None:
    expected, got = boltir.interp.run(op_level, inputs), boltir.interp.run(lowered, inputs)
    for index, (value, reference) in enumerate(zip(got, expected, strict=True)):
        error = relative_error(value.astype(np.float32), reference.astype(np.float32))
        assert error < tolerance, f"output {index}: ‖Δ‖/‖ref‖ = {error:.3g}"


# ------------------------------------------------------------------------- ResNet-50


@pytest.fixture(scope="module")
def resnet50():
    return import_light_model("resnet50", np.random.default_rng(50))


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_resnet50_lowers_without_separate_fusions(resnet50, dtype):
    """53 convs, each with its folded BatchNorm's bias, its ReLU and (16 of them) the
    residual add in the kernel; the stem blocked by space-to-depth-stem (7×7/2 on 3
    channels -> 4×4/1 on 12, padded to 16 in 16-bit types) on the optimized iterator as
    any other conv, reading the image through one op.space_to_depth; the classifier a
    GEMM."""
    op_level, lowered, collected = compile_to_cutlass(resnet50, dtype)
    instances = assert_fully_lowered(op_level, lowered, collected)
    convs = [op for op in instances if isinstance(op, cutlass.Conv2dFpropOp)]
    assert len(convs) == 53 and sum(isinstance(op, cutlass.GemmOp) for op in instances) == 1
    assert sum(op.residual is not None for op in convs) == 16
    assert all(op.bias is not None and op.epilogue.has_bias for op in convs)
    assert sum("relu" in (op.epilogue.first_activation.kind, op.epilogue.second_activation.kind) for op in convs) == 49
    stem = convs[0]
    assert stem.input.type.get_shape() == (1, 115, 115, 12 if dtype == "f32" else 16)
    assert stem.filter.type.get_shape()[1:3] == (4, 4) and stem.prop_value("strides") == (1, 1)
    assert stem.prop_value("iterator_algorithm") == "optimized"
    blocking = stem.input.owner
    assert isinstance(blocking, ops.SpaceToDepthOp) and blocking.input is boltir.interp.find_entry(lowered).body.block.args[0]


def test_resnet50_lowered_matches_the_op_level_module(resnet50, rng):
    op_level, lowered, _ = compile_to_cutlass(resnet50, "f16")
    assert_same_outputs(op_level, lowered, random_inputs(resnet50, rng), TOLERANCE["f16"])


# ---------------------------------------------------------------------- BERT encoder


@pytest.fixture(scope="module")
def bert_base():
    return import_model(bert_encoder_onnx(np.random.default_rng(768), **BERT_BASE))


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_bert_encoder_lowers_without_separate_fusions(bert_base, dtype):
    """With attention left unfused, per layer: Q, K, V and the output projection, the two
    feed-forward GEMMs, and the two batched attention GEMMs. The residual adds stay in the
    output projection's and the second feed-forward GEMM's epilogues, which therefore take
    one slice of K (CUTLASS cannot slice a residual block) while the other projections may
    split it."""
    op_level, lowered, collected = compile_to_cutlass(bert_base, dtype, fuse_attention=False)
    instances = assert_fully_lowered(op_level, lowered, collected)
    layers = BERT_BASE["layers"]
    assert len(instances) == 8 * layers and all(isinstance(op, cutlass.GemmOp) for op in instances)
    residual = [op for op in instances if op.residual is not None]
    assert len(residual) == 2 * layers
    assert all(op.prop_value("split_k") == 1 and op.epilogue.residual_kind == "add" and op.bias is not None for op in residual)
    batched = [op for op in instances if len(op.output.type.get_shape()) == 4]
    assert len(batched) == 2 * layers and all(op.prop_value("split_k") == 1 for op in batched)


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_bert_encoder_attention_fused(bert_base, dtype):
    """The default pipeline, per layer: one GEMM for Q, K and V (N = 3 × hidden) whose
    output one "BS3HD" op.attention reads with the mask as its bias, the output
    projection and the second feed-forward GEMM with the residual in their epilogues, the
    first with GELU; no transpose is left."""
    op_level, lowered, collected = compile_to_cutlass(bert_base, dtype)
    layers, hidden = BERT_BASE["layers"], BERT_BASE["hidden"]
    attentions = [op for op in lowered.walk() if isinstance(op, ops.AttentionOp)]
    assert len(attentions) == layers
    assert all(op.prop_value("layout") == "BS3HD" and op.bias is not None for op in attentions)
    assert len({op.bias for op in attentions}) == 1  # the mask is prepared once
    gemms = [op for op in lowered.walk() if isinstance(op, cutlass.GemmOp)]
    assert len(gemms) == 4 * layers
    assert [op.output.type.get_shape()[-1] for op in gemms[:4]] == [3 * hidden, hidden, BERT_BASE["ffn"], hidden]
    assert sum(op.residual is not None for op in gemms) == 2 * layers
    assert not [op for op in lowered.walk() if isinstance(op, ops.LayoutTransformOp | ops.SoftmaxOp)]


def test_bert_encoder_lowered_matches_the_op_level_module(bert_base, rng):
    op_level, lowered, _ = compile_to_cutlass(bert_base, "f16")
    given = {"attention_mask": attention_mask(rng, BERT_BASE["batch"], BERT_BASE["seq"])}
    assert_same_outputs(op_level, lowered, random_inputs(bert_base, rng, given), TOLERANCE["f16"])
