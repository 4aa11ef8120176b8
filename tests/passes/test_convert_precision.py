"""convert-precision: the model computes in f16 / bf16 / f32 behind an unchanged
interface, and gives the same outputs up to the precision's rounding."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp

from boltir.builder import ModelBuilder
from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dtypes import element_type_name
from boltir.interp import find_entry
from boltir.passes import statistics
from boltir.passes.convert_precision import ConvertPrecisionPass
from tests.passes.equivalence import assert_equivalent

TOLERANCES = {"f16": 1e-2, "bf16": 2e-2, "f32": 1e-5}


def weight(b: ModelBuilder, name: str, shape, rng, scale: float | None = None, dtype=np.float32):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    scale = scale if scale is not None else 1.0 / np.sqrt(fan_in)
    return b.constant(name, (rng.standard_normal(shape) * scale).astype(dtype))


def small_cnn(rng) -> ModelBuilder:
    """conv (odd channels) + BN + relu, max pool with padding, depthwise conv, residual
    add with a broadcast constant, global pool, flatten, gemm, softmax."""
    b = ModelBuilder()
    x = b.input("image", (2, 3, 12, 12))
    h = b.insert(graph.Conv2dOp(x, weight(b, "conv1.weight", (5, 3, 3, 3), rng), weight(b, "conv1.bias", (5,), rng, 0.1), pads=(1, 1, 1, 1))).output
    stats = [rng.uniform(0.5, 1.5, 5), rng.normal(0, 0.3, 5), rng.normal(0, 0.3, 5), rng.uniform(0.5, 2.0, 5)]
    params = [b.constant(f"bn.{n}", v.astype(np.float32)) for n, v in zip(("weight", "bias", "mean", "var"), stats)]
    h = b.insert(graph.ReluOp(b.insert(graph.BatchNormOp(h, *params)).output)).output
    h = b.insert(graph.MaxPool2dOp(h, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True)).output
    d = b.insert(graph.Conv2dOp(h, weight(b, "dw.weight", (5, 1, 3, 3), rng), pads=(1, 1, 1, 1), group=5)).output
    d = b.insert(graph.AddOp(d, b.constant("shift", rng.normal(0, 0.1, (5, 1, 1)).astype(np.float32)))).output
    h = b.insert(graph.ClipOp(b.insert(graph.AddOp(h, d)).output, 0.0, 6.0)).output
    h = b.insert(graph.FlattenOp(b.insert(graph.GlobalAvgPoolOp(h)).output, 1)).output
    logits = b.insert(graph.GemmOp(h, weight(b, "fc.weight", (7, 5), rng), weight(b, "fc.bias", (7,), rng, 0.1), trans_b=True)).output
    b.outputs = [b.insert(graph.SoftmaxOp(logits)).output, logits]
    return b


def transformer_block(rng, dtype=np.float32) -> ModelBuilder:
    """Token ids -> embedding (gather), pre-norm attention with a boolean mask (where),
    two heads, residual adds, a gelu MLP; a boolean output that must stay i1."""
    batch, seq, dim, heads = 2, 6, 16, 2
    hd = dim // heads
    b = ModelBuilder()
    ids = b.input("input_ids", (batch, seq), np.int64)
    mask = b.input("mask", (batch, 1, 1, seq), np.bool_)
    table = weight(b, "embed.weight", (10, dim), rng, 1.0, dtype)
    x = b.insert(graph.GatherOp(table, ids, 0)).output
    x = b.insert(graph.AddOp(x, weight(b, "pos", (seq, dim), rng, 0.1, dtype))).output

    def linear(v, name, n_in, n_out):
        y = b.insert(graph.MatMulOp(v, weight(b, f"{name}.weight", (n_in, n_out), rng, dtype=dtype))).output
        return b.insert(graph.AddOp(y, weight(b, f"{name}.bias", (n_out,), rng, 0.1, dtype))).output

    def norm(v, name):
        return b.insert(graph.LayerNormOp(v, weight(b, f"{name}.weight", (dim,), rng, 1.0, dtype), weight(b, f"{name}.bias", (dim,), rng, 0.1, dtype))).output

    h = norm(x, "ln1")
    def split_heads(v):
        v = b.insert(graph.ReshapeOp(v, (batch, seq, heads, hd))).output
        return b.insert(graph.TransposeOp(v, (0, 2, 1, 3))).output

    q, k, v = (split_heads(linear(h, n, dim, dim)) for n in ("q", "k", "v"))
    scores = b.insert(graph.MatMulOp(q, b.insert(graph.TransposeOp(k, (0, 1, 3, 2))).output)).output
    scores = b.insert(graph.MulOp(scores, b.constant("scale", np.array(1 / np.sqrt(hd), dtype)))).output
    scores = b.insert(graph.WhereOp(mask, scores, b.constant("masked", np.array(-1e4, dtype)))).output
    attention = b.insert(graph.SoftmaxOp(scores)).output
    context = b.insert(graph.MatMulOp(attention, v)).output
    context = b.insert(graph.ReshapeOp(b.insert(graph.TransposeOp(context, (0, 2, 1, 3))).output, (batch, seq, dim))).output
    x = b.insert(graph.AddOp(x, linear(context, "out", dim, dim))).output
    m = b.insert(graph.GeluOp(linear(norm(x, "ln2"), "fc1", dim, 4 * dim))).output
    x = b.insert(graph.AddOp(x, linear(m, "fc2", 4 * dim, dim))).output
    pooled = b.insert(graph.ReduceMeanOp(x, (1,), keepdims=False)).output
    is_pad = b.insert(graph.EqualOp(ids, b.constant("pad_id", np.array(0, np.int64)))).output
    b.outputs = [x, pooled, is_pad]
    return b


def finish(b: ModelBuilder) -> ModuleOp:
    return b.finish(b.outputs)


def run_pass(module: ModuleOp, rng, dtype: str, tolerance: float | None = None):
    with statistics.collecting() as collected:
        after = assert_equivalent(module, ConvertPrecisionPass(dtype), rng, tolerance=tolerance or TOLERANCES[dtype])
    return after, dict(collected.counters.get(ConvertPrecisionPass.name, {}))


def float_constants(module: ModuleOp) -> int:
    return sum(
        isinstance(op, graph.ConstantOp) and element_type_name(op.output.type.element_type) in ("f16", "bf16", "f32", "f64")
        for op in module.walk()
    )


def inner_element_types(module: ModuleOp) -> set[str]:
    """Element types of every value the graph ops produce, except the interface casts."""
    entry = find_entry(module)
    returned = set(next(op for op in entry.body.walk() if isinstance(op, func.ReturnOp)).operands)
    names = set()
    for op in entry.body.walk():
        if not isinstance(op, graph.GraphOp) or (isinstance(op, graph.CastOp) and op.output in returned):
            continue
        names |= {element_type_name(r.type.element_type) for r in op.results}
    return names


def signature(module: ModuleOp):
    return find_entry(module).function_type


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_small_cnn(rng, dtype):
    module = finish(small_cnn(rng))
    constants = float_constants(module)
    after, counts = run_pass(module, rng, dtype)

    assert signature(after) == signature(module)
    assert inner_element_types(after) == {dtype}
    assert counts == {"casts inserted": 3, "weights converted": constants}  # image in, two outputs
    casts = [op for op in after.walk() if isinstance(op, graph.CastOp)]
    assert [element_type_name(c.output.type.element_type) for c in casts] == [dtype, "f32", "f32"]


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_transformer_block(rng, dtype):
    module = finish(transformer_block(rng))
    constants = float_constants(module)
    after, counts = run_pass(module, rng, dtype)

    assert signature(after) == signature(module)
    # Token ids, the mask, the pad-id comparison stay integer / boolean.
    assert inner_element_types(after) == {dtype, "i1", "i64"}
    gather = next(op for op in after.walk() if isinstance(op, graph.GatherOp))
    assert element_type_name(gather.indices.type.element_type) == "i64"
    # No float input: only the two float outputs get casts.
    assert counts == {"casts inserted": 2, "weights converted": constants}


def test_f16_model_to_f32(rng):
    """dtype=f32 widens: an f16 model computes in f32 and still takes and gives f16."""
    module = finish(transformer_block(rng, np.float16))
    after, counts = run_pass(module, rng, "f32", tolerance=1e-2)
    assert inner_element_types(after) == {"f32", "i1", "i64"}
    assert signature(after) == signature(module)
    assert counts["casts inserted"] == 2


def test_casts_inside_the_model(rng):
    """A cast to a float type now casts to the target; one that became an identity
    (f32 -> f32 is f16 -> f16) goes; a cast to an integer keeps its result type."""
    b = ModelBuilder()
    x = b.input("x", (3, 4))
    n = b.input("n", (3, 4), np.int32)
    as_float = b.insert(graph.CastOp(n, graph.Float32Type())).output
    same = b.insert(graph.CastOp(x, graph.Float32Type())).output
    y = b.insert(graph.AddOp(as_float, same)).output
    # Truncating a value that f16 rounds differently can move it by one: cast back only
    # values f16 holds exactly (small integers times ten), so the check stays exact.
    to_int = b.insert(graph.CastOp(b.insert(graph.MulOp(as_float, b.constant("ten", np.array(10.0, np.float32)))).output, graph.IntegerType(32))).output
    module = b.finish([y, to_int])

    after, counts = run_pass(module, rng, "f16")
    casts = [op for op in after.walk() if isinstance(op, graph.CastOp)]
    shown = [(element_type_name(c.input.type.element_type), element_type_name(c.output.type.element_type)) for c in casts]
    assert shown == [("f32", "f16"), ("i32", "f16"), ("f16", "i32"), ("f16", "f32")]
    assert counts == {"casts inserted": 2, "weights converted": 1}


def test_f32_model_to_f32_changes_nothing(rng):
    module = finish(small_cnn(rng))
    after, counts = run_pass(module, rng, "f32")
    assert counts == {}
    assert [op.name for op in after.walk()] == [op.name for op in module.walk()]


def weight_handles(module: ModuleOp) -> set[str]:
    return {
        op.value.resource_handle.data
        for op in module.walk()
        if isinstance(op, graph.ConstantOp) and isinstance(op.value, DenseResourceAttr)
    }


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_weights_keep_their_names(rng, dtype):
    """A converted weight is named after the original, with the type as a suffix (and
    the store's `_N` where another test made that name first)."""
    module = finish(small_cnn(rng))
    after, _ = run_pass(module, rng, dtype)
    # Small f32 constants are inline (no handle): their value names stand in.
    before = weight_handles(module) | {op.output.name_hint for op in module.walk() if isinstance(op, graph.ConstantOp)}
    converted = weight_handles(after)
    matches = [re.fullmatch(rf"(.+)\.{dtype}(_[0-9]+)?", handle) for handle in converted]
    assert converted and all(m is not None and m.group(1) in before for m in matches), converted


def test_bad_dtype_argument():
    with pytest.raises(BoltError, match="dtype must be one of f16, bf16, f32, got 'fp16'"):
        ConvertPrecisionPass(dtype="fp16")
