"""convert-precision: the model computes in f16 / bf16 / f32 behind an unchanged
interface, and gives the same outputs up to the precision's rounding."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseResourceAttr, Float16Type, ModuleOp

import boltir
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


# ------------------------------------------------------------------------- keep_f32


def named(module: ModuleOp) -> ModuleOp:
    """Names every computing op `<kind>_<index>` (as the ONNX importer names ops after
    their nodes), e.g. conv2d_0, gemm_0."""
    from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr

    counts: dict[str, int] = {}
    for op in module.walk():
        if isinstance(op, graph.GraphOp) and not isinstance(op, graph.ConstantOp):
            kind = op.name.removeprefix("graph.")
            op.location = NameLoc(StringAttr(f"{kind}_{counts.get(kind, 0)}"), NoneAttr())
            counts[kind] = counts.get(kind, 0) + 1
    return module


def ops_named(module: ModuleOp, name: str) -> list:
    from xdsl.dialects.builtin import NameLoc

    return [op for op in module.walk() if isinstance(op.location, NameLoc) and op.location.desc.data == name
            and not isinstance(op, (graph.CastOp, graph.ConstantOp))]


def float_types(op) -> set[str]:
    return {element_type_name(v.type.element_type) for v in (*op.operands, *op.results)} & {"f16", "bf16", "f32", "f64"}


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_keep_f32_in_a_cnn(rng, dtype):
    """The kept conv, depthwise conv and gemm compute in f32 from f32 weights, with casts
    at their edges; the rest in `dtype`; same outputs up to `dtype`'s rounding."""
    module = named(finish(small_cnn(rng)))
    kept = ("conv2d_0", "conv2d_1", "gemm_0")
    with statistics.collecting() as collected:
        after = assert_equivalent(module, ConvertPrecisionPass(dtype, keep_f32=kept), rng, tolerance=TOLERANCES[dtype])
    counts = collected.counters[ConvertPrecisionPass.name]
    assert counts["ops kept in f32"] == 3
    for name in kept:
        (op,) = ops_named(after, name)
        assert float_types(op) == {"f32"}, name
        assert all(isinstance(v.owner, (graph.ConstantOp, graph.CastOp)) or v.owner.name == "graph.relu"
                   for v in op.operands if isinstance(v.owner, graph.GraphOp)), name
    for name in ("relu_0", "max_pool2d_0", "softmax_0"):
        assert all(float_types(op) == {dtype} for op in ops_named(after, name)), name
    assert signature(after) == signature(module)


def test_keep_f32_reads_its_weights_unrounded(rng):
    """The kept embedding gather reads the f32 table, not a copy rounded to f16; the
    integer ids stay as they are."""
    module = named(finish(transformer_block(rng)))
    after, _ = run_pass_keeping(module, rng, ("gather_0",))
    (gather,) = ops_named(after, "gather_0")
    assert float_types(gather) == {"f32"}
    assert isinstance(gather.operands[0].owner, graph.ConstantOp)
    assert element_type_name(gather.indices.type.element_type) == "i64"


def test_keep_f32_widens_an_f16_model(rng):
    """In an f16 model the kept ops become f32 (with their weights), not stay f16."""
    module = named(finish(transformer_block(rng, np.float16)))
    after = assert_equivalent(module, ConvertPrecisionPass("f16", keep_f32=("matmul_0", "layer_norm_1")), rng, tolerance=1e-2)
    for name in ("matmul_0", "layer_norm_1"):
        (op,) = ops_named(after, name)
        assert float_types(op) == {"f32"}, name
    assert signature(after) == signature(module)


def test_a_weight_shared_with_a_kept_op_is_copied(rng):
    b = ModelBuilder()
    x = b.input("x", (2, 4))
    shift = b.constant("shift", rng.standard_normal(4).astype(np.float32))
    kept = b.insert(graph.AddOp(x, shift)).output
    other = b.insert(graph.SubOp(x, shift)).output
    module = named(b.finish([kept, other]))
    after, _ = run_pass_keeping(module, rng, ("add_0",))
    (add,) = ops_named(after, "add_0")
    (sub,) = ops_named(after, "sub_0")
    assert element_type_name(add.rhs.type.element_type) == "f32" and isinstance(add.rhs.owner, graph.ConstantOp)
    assert element_type_name(sub.rhs.type.element_type) == "f16" and add.rhs.owner is not sub.rhs.owner


def run_pass_keeping(module: ModuleOp, rng, names, dtype: str = "f16"):
    with statistics.collecting() as collected:
        after = assert_equivalent(module, ConvertPrecisionPass(dtype, keep_f32=names), rng, tolerance=TOLERANCES[dtype])
    return after, dict(collected.counters.get(ConvertPrecisionPass.name, {}))


def test_keep_f32_in_an_f32_model_changes_nothing(rng):
    module = named(finish(small_cnn(rng)))
    after, counts = run_pass_keeping(module, rng, ("conv2d_0",), "f32")
    assert counts == {"ops kept in f32": 1}
    assert [op.name for op in after.walk()] == [op.name for op in module.walk()]


def test_keep_f32_from_a_pipeline_string():
    from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec

    names = ("/backbone/conv1/Conv", "head.0:out", 'odd"name', "back\\slash")
    passes = parse_pipeline_spec(default_pipeline(keep_f32=names), available_passes())
    (convert,) = [p for p in passes if isinstance(p, ConvertPrecisionPass)]
    assert convert.keep_f32 == names and convert.dtype == "f16"
    assert "keep_f32" not in default_pipeline()
    with pytest.raises(BoltError, match="bad pass pipeline"):
        parse_pipeline_spec("convert-precision{keep_f32=}", available_passes())


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (("conv2d",), r"keep-f32: no op named 'conv2d' is left when precision is chosen \(.*\); near matches: 'conv2d_[01]', 'conv2d_[01]'$"),
        (("zzz",), r"keep-f32: no op named 'zzz' .*; ops are named by their ONNX node names$"),
        (("relu_0", "Relu_0"), r"no op named 'Relu_0' .*; near matches: 'relu_0'$"),
    ],
)
def test_keep_f32_unknown_names(rng, names, message):
    module = named(finish(small_cnn(rng)))
    with pytest.raises(BoltError, match=message):
        ConvertPrecisionPass("f16", keep_f32=names).apply(boltir.make_context(), module)


def test_keep_f32_without_names_in_the_model(rng):
    with pytest.raises(BoltError, match="no op named 'conv1' .*; the model's ops carry no names$"):
        ConvertPrecisionPass("f16", keep_f32=("conv1",)).apply(boltir.make_context(), finish(small_cnn(rng)))


def test_keep_f32_of_what_cannot_be_kept(rng):
    module = named(finish(transformer_block(rng)))
    with pytest.raises(BoltError, match=r"keep-f32: op 'equal_0' \(graph.equal\) has no float operand or result; "
                                        "there is nothing to keep in f32"):
        ConvertPrecisionPass("f16", keep_f32=("equal_0",)).apply(boltir.make_context(), module)


def test_a_kept_op_reads_the_models_own_f16_rounding(rng):
    """A value the model itself casts to f16 reaches a kept op as that f16 value (cast up),
    not as the f32 value before the model's cast."""
    b = ModelBuilder()
    x = b.input("x", (4,))
    half = b.insert(graph.CastOp(x, Float16Type())).output
    module = named(b.finish([b.insert(graph.MulOp(half, half)).output]))
    after, _ = run_pass_keeping(module, rng, ("mul_0",))
    (mul,) = ops_named(after, "mul_0")
    up = mul.lhs.owner
    assert isinstance(up, graph.CastOp) and element_type_name(up.input.type.element_type) == "f16"
    assert isinstance(up.input.owner, graph.CastOp) and up.input.owner.input is find_entry(after).body.block.args[0]


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_most_negative_float_mask_stays_finite(rng, dtype):
    """An exporter's padding mask, (1 - mask) * finfo(f32).min: the constant saturates to the
    target's largest finite value, so an attended key (mask 1) adds 0, not 0 * -inf = NaN."""
    b = ModelBuilder()
    scores = b.input("scores", (2, 8))
    mask = b.input("mask", (2, 8))
    lowest = b.constant("lowest", np.array(np.finfo(np.float32).min, np.float32))
    one = b.constant("one", np.array(1.0, np.float32))
    bias = b.insert(graph.MulOp(b.insert(graph.SubOp(one, mask)).results[0], lowest)).results[0]
    module = b.finish([b.insert(graph.AddOp(scores, bias)).results[0]])
    after = module.clone()  # not assert_equivalent: a random mask's products overflow f16 anyway
    ConvertPrecisionPass(dtype).apply(boltir.make_context(), after)
    boltir.verify_module(after)
    scores = rng.standard_normal((2, 8)).astype(np.float32)
    mask = np.ones((2, 8), np.float32)
    mask[1, 5:] = 0  # padding keys
    (out,) = boltir.interp.run(after, {"scores": scores, "mask": mask})
    assert np.isfinite(out[0]).all() and np.allclose(out[0], scores[0], atol=1e-2)
    assert np.allclose(out[1, :5], scores[1, :5], atol=1e-2) and (out[1, 5:] < -3e4).all()
