"""lower-graph-to-op: every graph op, and whole imported models, compute the same outputs
before and after the lowering, on fresh random inputs (‖Δ‖/‖ref‖ < 1e-5 in f32), and no
graph op is left."""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from xdsl.dialects.builtin import Float16Type, Float32Type, IntegerType, ModuleOp
from xdsl.ir import SSAValue

from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.passes import statistics
from boltir.passes.lower_graph_to_op import LowerGraphToOpPass
from tests.frontends import onnx_models
from tests.passes.equivalence import assert_equivalent

PASS = LowerGraphToOpPass()


def graph_ops(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("graph.")]


def lower(module: ModuleOp, rng: np.random.Generator, trials: int = 2) -> tuple[ModuleOp, statistics.PassStatistics]:
    """Lowers a clone of `module`, checks equivalence, and that only op-level ops remain."""
    before = graph_ops(module)
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng, trials=trials)
    assert graph_ops(after) == []
    lowered = sum(collected.get(PASS.name, f"{name} lowered") for name in set(before))
    assert lowered == len(before)
    return after, collected


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("op.")]


# ----------------------------------------------------------------- one op per module

Build = Callable[[ModelBuilder, np.random.Generator], list[SSAValue]]
CASES: dict[str, Build] = {}


def case(name: str):
    def register(build: Build) -> Build:
        CASES[name] = build
        return build

    return register


def weight(b: ModelBuilder, rng: np.random.Generator, name: str, shape, dtype=np.float32, low=-1.0, high=1.0) -> SSAValue:
    return b.constant(name, rng.uniform(low, high, shape).astype(dtype))


def unary_case(name: str, make: Callable[[SSAValue], graph.GraphOp], shape=(2, 3, 5), dtype=np.float32):
    CASES[name] = lambda b, rng: [b.insert(make(b.input("x", shape, dtype))).output]


for _name, _make in {
    "relu": lambda x: graph.ReluOp(x),
    "leaky_relu": lambda x: graph.LeakyReluOp(x, 0.1),
    "gelu": lambda x: graph.GeluOp(x),
    "gelu_tanh": lambda x: graph.GeluOp(x, "tanh"),
    "sigmoid": lambda x: graph.SigmoidOp(x),
    "tanh": lambda x: graph.TanhOp(x),
    "silu": lambda x: graph.SiluOp(x),
    "hardswish": lambda x: graph.HardSwishOp(x),
    "hardsigmoid": lambda x: graph.HardSigmoidOp(x, 0.3, 0.4),
    "clip": lambda x: graph.ClipOp(x, -0.5, 0.75),
    "clip_max_only": lambda x: graph.ClipOp(x, max=0.5),
    "clip_min_only": lambda x: graph.ClipOp(x, min=-0.5),
    "clip_unbounded": lambda x: graph.ClipOp(x),
    "clip_min_above_max": lambda x: graph.ClipOp(x, 1.0, -1.0),
    "erf": lambda x: graph.ErfOp(x),
    "sqrt": lambda x: graph.SqrtOp(x),  # NaN where negative, in the same places
    "exp": lambda x: graph.ExpOp(x),
    "neg": lambda x: graph.NegOp(x),
    "reciprocal": lambda x: graph.ReciprocalOp(x),
    "cast_f16": lambda x: graph.CastOp(x, Float16Type()),
    "cast_i32": lambda x: graph.CastOp(x, IntegerType(32)),
}.items():
    unary_case(_name, _make)
unary_case("sigmoid_f16", lambda x: graph.SigmoidOp(x), dtype=np.float16)
unary_case("relu_i32", lambda x: graph.ReluOp(x), dtype=np.int32)
unary_case("neg_i64", lambda x: graph.NegOp(x), dtype=np.int64)
unary_case("clip_i32", lambda x: graph.ClipOp(x, 1.0, 2.0), dtype=np.int32)
unary_case("clip_i64_max_only", lambda x: graph.ClipOp(x, max=2.5), dtype=np.int64)
unary_case("cast_i64_f32", lambda x: graph.CastOp(x, Float32Type()), dtype=np.int64)
unary_case("not", lambda x: graph.NotOp(x), dtype=np.bool_)


BINARY = {
    "add": graph.AddOp, "sub": graph.SubOp, "mul": graph.MulOp, "div": graph.DivOp, "pow": graph.PowOp, "equal": graph.EqualOp,
    "greater": graph.GreaterOp, "greater_equal": graph.GreaterOrEqualOp, "less": graph.LessOp, "less_equal": graph.LessOrEqualOp,
}  # fmt: skip
for _name, _op in BINARY.items():
    CASES[_name] = lambda b, rng, op=_op: [b.insert(op(b.input("a", (2, 1, 4)), b.input("b", (3, 1)))).output]
CASES["greater_equal_i64"] = lambda b, rng: [  # small integers: ties occur
    b.insert(graph.GreaterOrEqualOp(b.input("a", (3, 4), np.int64), b.input("b", (4,), np.int64))).output
]
for _name, _op in {"and": graph.AndOp, "or": graph.OrOp, "xor": graph.XorOp}.items():
    CASES[_name] = lambda b, rng, op=_op: [b.insert(op(b.input("a", (2, 1, 4), np.bool_), b.input("b", (3, 1), np.bool_))).output]
CASES["div_i64"] = lambda b, rng: [
    b.insert(graph.DivOp(b.input("a", (3, 4), np.int64), b.constant("d", np.array([1, -2, 3, -4], np.int64)))).output
]
CASES["add_constant"] = lambda b, rng: [b.insert(graph.AddOp(b.input("a", (2, 3)), weight(b, rng, "c", (3,)))).output]


@case("sum")
def _(b, rng):
    return [b.insert(graph.SumOp([b.input("a", (2, 3)), b.input("b", (3,)), b.input("c", (2, 1))])).output]


@case("sum_single")
def _(b, rng):
    return [b.insert(graph.SumOp([b.input("a", (2, 3))])).output]


@case("where")
def _(b, rng):
    condition = b.input("c", (2, 1, 3), np.bool_)
    return [b.insert(graph.WhereOp(condition, b.input("a", (4, 3)), b.input("b", (1,)))).output]


def conv_case(name, x_shape, w_shape, bias=True, layout="NCHW", filter_layout="OIHW", **options):
    def build(b, rng):
        x = b.input("x", x_shape)
        w = weight(b, rng, "w", w_shape)
        channels = w_shape[0]
        c = weight(b, rng, "b", (channels,)) if bias else None
        return [b.insert(graph.Conv2dOp(x, w, c, layout=layout, filter_layout=filter_layout, **options)).output]

    CASES[name] = build


conv_case("conv2d", (2, 3, 9, 8), (5, 3, 3, 3), pads=(1, 1, 1, 1))
conv_case("conv2d_no_bias_strided", (1, 4, 9, 9), (6, 4, 3, 2), bias=False, strides=(2, 1), pads=(0, 1, 2, 0), dilations=(1, 2))
conv_case("conv2d_grouped", (1, 6, 7, 7), (9, 2, 3, 3), group=3, pads=(1, 1, 1, 1))
conv_case("conv2d_depthwise", (2, 8, 8, 8), (8, 1, 3, 3), group=8, strides=(2, 2), pads=(1, 1, 1, 1))
conv_case("conv2d_nhwc_ohwi", (2, 9, 8, 4), (6, 3, 3, 2), layout="NHWC", filter_layout="OHWI", group=2, pads=(1, 0, 1, 0))


def conv_transpose_case(name, x_shape, w_shape, group=1, bias=True, layout="NCHW", filter_layout="IOHW", **options):
    def build(b, rng):
        x = b.input("x", x_shape)
        w = weight(b, rng, "w", w_shape)
        per_group = w_shape[1] if filter_layout == "IOHW" else w_shape[3]
        c = weight(b, rng, "b", (per_group * group,)) if bias else None
        op = graph.ConvTranspose2dOp(x, w, c, group=group, layout=layout, filter_layout=filter_layout, **options)
        return [b.insert(op).output]

    CASES[name] = build


conv_transpose_case("conv_transpose2d", (1, 4, 5, 5), (4, 3, 3, 3), strides=(2, 2), pads=(1, 1, 1, 1), output_padding=(1, 1))
conv_transpose_case("conv_transpose2d_grouped_no_bias", (2, 6, 4, 3), (6, 2, 2, 3), group=2, bias=False, strides=(2, 1))
conv_transpose_case("conv_transpose2d_nhwc_ihwo", (1, 5, 5, 4), (4, 2, 2, 3), layout="NHWC", filter_layout="IHWO", strides=(2, 2))


def matmul_case(name, a_shape, b_shape, b_constant=False):
    def build(b, rng):
        lhs = b.input("a", a_shape)
        rhs = weight(b, rng, "w", b_shape) if b_constant else b.input("b", b_shape)
        return [b.insert(graph.MatMulOp(lhs, rhs)).output]

    CASES[name] = build


matmul_case("matmul", (4, 6), (6, 5), b_constant=True)
matmul_case("matmul_batched_broadcast", (3, 1, 4, 6), (2, 6, 5))
matmul_case("matmul_vector_lhs", (6,), (2, 6, 5))
matmul_case("matmul_vector_rhs", (2, 4, 6), (6,))
matmul_case("matmul_vectors", (6,), (6,))


def gemm_case(name, c_shape=None, trans_a=False, trans_b=False, alpha=1.0, beta=1.0):
    def build(b, rng):
        m, n, k = 4, 5, 6
        a = b.input("a", (k, m) if trans_a else (m, k))
        w = weight(b, rng, "w", (n, k) if trans_b else (k, n))
        c = weight(b, rng, "c", c_shape) if c_shape is not None else None
        return [b.insert(graph.GemmOp(a, w, c, alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b)).output]

    CASES[name] = build


gemm_case("gemm_no_c")
gemm_case("gemm_bias_trans_b", (5,), trans_b=True)
gemm_case("gemm_bias_alpha_beta", (5,), trans_a=True, alpha=0.5, beta=-2.0)
gemm_case("gemm_row_c", (1, 5), trans_a=True, trans_b=True, beta=0.25)
gemm_case("gemm_full_c", (4, 5), alpha=2.0, beta=-3.0)
gemm_case("gemm_column_c", (4, 1), beta=1.5)
gemm_case("gemm_scalar_c", (), alpha=0.75)


def batch_norm_case(name, shape, constant=True):
    def build(b, rng):
        x = b.input("x", shape)
        channels = shape[1]
        ranges = [(0.5, 1.5), (-0.5, 0.5), (-0.5, 0.5), (0.5, 2.0)]
        if constant:
            params = [weight(b, rng, f"bn.{i}", (channels,), low=lo, high=hi) for i, (lo, hi) in enumerate(ranges)]
        else:  # run-time parameters; the variance kept positive through exp
            scale, shift, mean, log_variance = (b.input(f"p{i}", (channels,)) for i in range(4))
            params = [scale, shift, mean, b.insert(graph.ExpOp(log_variance)).output]
        return [b.insert(graph.BatchNormOp(x, *params, epsilon=1e-3)).output]

    CASES[name] = build


batch_norm_case("batch_norm", (2, 4, 5, 3))
batch_norm_case("batch_norm_rank2", (3, 6))
batch_norm_case("batch_norm_runtime_rank3", (2, 4, 5), constant=False)


def pool_case(name, op: Callable, shape=(2, 3, 9, 8)):
    CASES[name] = lambda b, rng: [b.insert(op(b.input("x", shape))).output]


pool_case("max_pool2d", lambda x: graph.MaxPool2dOp(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)))
pool_case("max_pool2d_dilated_ceil", lambda x: graph.MaxPool2dOp(x, (2, 3), strides=(2, 2), dilations=(2, 1), ceil_mode=True))
pool_case("max_pool2d_nhwc", lambda x: graph.MaxPool2dOp(x, (2, 2), strides=(2, 2), layout="NHWC"))
pool_case("avg_pool2d", lambda x: graph.AvgPool2dOp(x, (3, 3), strides=(2, 1), pads=(1, 0, 1, 2)))
pool_case("avg_pool2d_count_pad_ceil", lambda x: graph.AvgPool2dOp(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True, count_include_pad=True))
pool_case("avg_pool2d_nhwc", lambda x: graph.AvgPool2dOp(x, (2, 2), strides=(2, 2), layout="NHWC"))
pool_case("global_avg_pool", lambda x: graph.GlobalAvgPoolOp(x))
pool_case("avg_pool2d_identity", lambda x: graph.AvgPool2dOp(x, (1, 1)))
pool_case("max_pool2d_identity_nhwc", lambda x: graph.MaxPool2dOp(x, (1, 1), strides=(1, 1), layout="NHWC"))
pool_case("global_avg_pool_nhwc", lambda x: graph.GlobalAvgPoolOp(x, layout="NHWC"))
pool_case("global_avg_pool_rank3", lambda x: graph.GlobalAvgPoolOp(x), shape=(2, 3, 7))
pool_case("global_avg_pool_rank3_nhwc", lambda x: graph.GlobalAvgPoolOp(x, layout="NHWC"), shape=(2, 7, 3))
pool_case("global_avg_pool_rank5", lambda x: graph.GlobalAvgPoolOp(x), shape=(1, 2, 3, 4, 5))


@case("softmax")
def _(b, rng):
    return [b.insert(graph.SoftmaxOp(b.input("x", (2, 5, 6)), axis=1)).output]


@case("layer_norm")
def _(b, rng):
    x = b.input("x", (2, 5, 8))
    return [b.insert(graph.LayerNormOp(x, weight(b, rng, "g", (8,)), weight(b, rng, "b", (8,)), epsilon=1e-5)).output]


@case("layer_norm_two_axes_no_bias")
def _(b, rng):
    x = b.input("x", (2, 5, 8))
    return [b.insert(graph.LayerNormOp(x, b.input("g", (5, 8)), axis=-2)).output]


for _name, _op in {"reduce_mean": graph.ReduceMeanOp, "reduce_sum": graph.ReduceSumOp, "reduce_max": graph.ReduceMaxOp}.items():
    CASES[_name] = lambda b, rng, op=_op: [b.insert(op(b.input("x", (2, 3, 4, 5)), (1, -1), keepdims=True)).output]
    CASES[f"{_name}_dropped"] = lambda b, rng, op=_op: [b.insert(op(b.input("x", (2, 3, 4)), (0,), keepdims=False)).output]


@case("cumsum")
def _(b, rng):
    return [b.insert(graph.CumSumOp(b.input("x", (2, 5, 6)), axis=1, exclusive=True)).output]


@case("cumsum_i64_reverse")
def _(b, rng):
    return [b.insert(graph.CumSumOp(b.input("ids", (2, 9), np.int64), axis=-1, reverse=True)).output]


def shape_case(name, make: Callable[[SSAValue], graph.GraphOp], shape=(2, 3, 1, 4)):
    CASES[name] = lambda b, rng: [b.insert(make(b.input("x", shape))).output]


shape_case("reshape", lambda x: graph.ReshapeOp(x, (6, 4)))
shape_case("flatten", lambda x: graph.FlattenOp(x, 2))
shape_case("squeeze", lambda x: graph.SqueezeOp(x, (2,)))
shape_case("unsqueeze", lambda x: graph.UnsqueezeOp(x, (0, 5)))
shape_case("expand", lambda x: graph.ExpandOp(x, (3, 2, 3, 5, 4)))
shape_case("transpose", lambda x: graph.TransposeOp(x, (3, 0, 2, 1)))
shape_case("slice", lambda x: graph.SliceOp(x, (-1, 0), (-1000, 3), (1, 3), (-2, 2)))
shape_case("pad_constant", lambda x: graph.PadOp(x, (0, 1, 0, 2, 1, 0, 0, 1), "constant", -1.5))
shape_case("pad_reflect", lambda x: graph.PadOp(x, (0, 1, 0, 1, 0, 1, 0, 2), "reflect"))
shape_case("pad_edge_crop", lambda x: graph.PadOp(x, (1, 0, 2, -1, 0, -1, 0, 1), "edge"))
shape_case("space_to_depth", lambda x: graph.SpaceToDepthOp(x, 2), shape=(2, 3, 4, 6))
shape_case("resize_linear", lambda x: graph.ResizeOp(x, (1.0, 1.0, 2.0, 2.0), mode="linear"), shape=(1, 2, 3, 4))
shape_case(
    "resize_nearest",
    lambda x: graph.ResizeOp(x, (1.0, 1.0, 2.0, 1.5), coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    shape=(1, 2, 3, 4),
)


@case("concat")
def _(b, rng):
    return [b.insert(graph.ConcatOp([b.input("a", (2, 3, 4)), b.input("b", (2, 1, 4)), weight(b, rng, "c", (2, 2, 4))], 1)).output]


@case("split")
def _(b, rng):
    return list(b.insert(graph.SplitOp(b.input("x", (2, 10, 3)), (3, 0, 7), axis=-2)).outputs)


@case("gather")
def _(b, rng):
    table = weight(b, rng, "table", (6, 5))
    return [b.insert(graph.GatherOp(table, b.input("ids", (2, 3), np.int64), axis=0)).output]


@case("gather_axis1_scalar")
def _(b, rng):
    index = b.constant("index", np.array(-1, np.int64))
    return [b.insert(graph.GatherOp(b.input("x", (2, 4, 3)), index, axis=1)).output]


@case("constant_output")
def _(b, rng):
    return [weight(b, rng, "w", (3, 4)), b.insert(graph.ReluOp(b.input("x", (2,)))).output]



# Attention: "BHSD" as it is; the boolean mask becomes 0 / -inf; q, k and v transposed
# from [B, S, H, D] (and a result transposed back) read as "BSHD", with no transpose left.
ATTENTION_HEADS = (2, 3, 5, 8)


@case("attention")
def _(b, rng):
    q, k, v = (b.input(name, ATTENTION_HEADS) for name in "qkv")
    return [b.insert(graph.AttentionOp(q, k, v, b.input("m", (2, 1, 1, 5)), scale=0.3)).output]


@case("attention_boolean_causal")
def _(b, rng):
    q, k, v = (b.input(name, ATTENTION_HEADS) for name in "qkv")
    return [b.insert(graph.AttentionOp(q, k, v, b.input("m", (5, 5), np.bool_), scale=0.3, causal=True)).output]


@case("attention_bshd")
def _(b, rng):
    heads = [b.insert(graph.TransposeOp(b.input(name, (2, 5, 3, 8)), (0, 2, 1, 3))).output for name in "qkv"]
    attention = b.insert(graph.AttentionOp(*heads, scale=0.3))
    return [b.insert(graph.TransposeOp(attention.output, (0, 2, 1, 3))).output]


def test_attention_reads_heads_in_place(rng):
    """The [B, S, H, D] form lowers to one "BSHD" attention and nothing else."""
    b = ModelBuilder()
    outputs = CASES["attention_bshd"](b, rng)
    after, _ = lower(b.finish(outputs), rng)
    assert op_names(after) == ["op.attention"]
    assert [op.prop_value("layout") for op in after.walk() if isinstance(op, ops.AttentionOp)] == ["BSHD"]


def test_every_graph_op_has_a_case():
    """The cases above cover every op of the graph dialect."""
    covered = set()
    for build in CASES.values():
        b = ModelBuilder()
        build(b, np.random.default_rng(0))
        covered |= {op.name for op in b.block.ops}
    assert {op.name for op in graph.Graph.operations} - covered == set()


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # sqrt, pow: NaN on both sides
@pytest.mark.parametrize("name", list(CASES))
def test_lower_op(name, rng):
    b = ModelBuilder()
    outputs = CASES[name](b, rng)
    lower(b.finish(outputs), rng)


# -------------------------------------------------------------- what ops become


def lowered(build: Build, rng) -> ModuleOp:
    b = ModelBuilder()
    after, _ = lower(b.finish(build(b, rng)), rng, trials=1)
    return after


def test_conv_bias_goes_into_the_epilogue(rng):
    after = lowered(CASES["conv2d"], rng)
    (conv,) = [op for op in after.walk() if isinstance(op, ops.Conv2dOp)]
    assert conv.bias is not None and conv.epilogue == ops.EpilogueAttr.make(bias=True)
    assert (conv.prop_value("layout"), conv.prop_value("filter_layout")) == ("NCHW", "OIHW")


def test_gemm_trans_flags_become_col_layouts(rng):
    after = lowered(CASES["gemm_bias_alpha_beta"], rng)
    (gemm,) = [op for op in after.walk() if isinstance(op, ops.GemmOp)]
    assert (gemm.prop_value("layout_a"), gemm.prop_value("layout_b")) == ("col", "row")
    assert gemm.epilogue == ops.EpilogueAttr.make(alpha=0.5, beta=-2.0, bias=True)


def test_gemm_full_c_is_added_after(rng):
    after = lowered(CASES["gemm_full_c"], rng)
    assert op_names(after) == ["op.constant", "op.constant", "op.gemm", "op.constant", "op.binary", "op.binary"]
    (gemm,) = [op for op in after.walk() if isinstance(op, ops.GemmOp)]
    assert gemm.bias is None and gemm.epilogue == ops.EpilogueAttr.make(alpha=2.0)


def test_batch_norm_becomes_scale_and_shift(rng):
    after = lowered(CASES["batch_norm"], rng)
    binaries = [op.fn.data for op in after.walk() if isinstance(op, ops.BinaryOp)]
    assert binaries == ["mul", "add"]


def test_split_becomes_slices_and_expand_an_identity_body(rng):
    assert op_names(lowered(CASES["split"], rng)) == ["op.slice"] * 3
    (expand,) = [op for op in lowered(CASES["expand"], rng).walk() if isinstance(op, ops.ElementwiseOp)]
    assert [op.name for op in expand.body.block.ops] == ["op.yield"]


def test_locations_are_kept(rng):
    import boltir

    text = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.relu %x : tensor<2x3xf32>
  %1 = graph.transpose %0 {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}
"""
    module = boltir.parse_module(text, "model.mlir")
    LowerGraphToOpPass().apply(boltir.make_context(), module)
    printed = boltir.print_module(module, debuginfo=True)
    assert 'op.unary relu %x : tensor<2x3xf32> loc("model.mlir":3:3)' in printed
    assert 'loc("model.mlir":4:3)' in printed


# ------------------------------------------------------------------------ whole models


MODELS = {
    "resnet": onnx_models.resnet_onnx,
    "mobilenet_v2": onnx_models.mobilenet_v2_onnx,
    "bert": onnx_models.bert_onnx,
    "unet": onnx_models.unet_onnx,
}


@pytest.mark.parametrize("name", list(MODELS))
def test_models(name, rng):
    module = import_model(MODELS[name](rng))
    after, _ = lower(module, rng, trials=1)
    assert any(isinstance(op, ops.GemmOp | ops.Conv2dOp) for op in after.walk())


def light_resnet50(rng: np.random.Generator) -> onnx.ModelProto:
    """ONNX's light ResNet-50 topology, with fresh random weights: its stored weights
    are ConstantOfShape nodes that fill every tensor with 0.02."""
    path = os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/light/light_resnet50.onnx")
    model = onnx.load(path)
    initializers = {t.name: t for t in model.graph.initializer}
    replaced = {}
    for node in model.graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in initializers:
            continue
        shape = tuple(int(d) for d in numpy_helper.to_array(initializers[node.input[0]]))
        name = node.output[0]
        normal = rng.standard_normal(shape, dtype=np.float32)
        if name.endswith("_w_0") and len(shape) == 4:  # conv weights, He-scaled
            value = normal * np.float32(math.sqrt(2.0 / np.prod(shape[1:])))
        elif name.endswith("_w_0"):  # the classifier
            value = normal * np.float32(1.0 / math.sqrt(shape[-1]))
        elif name.endswith(("_bn_s_0", "_bn_riv_0")):  # BN scales and variances
            value = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        else:  # biases, running means
            value = normal * np.float32(0.1)
        replaced[name] = numpy_helper.from_array(value, name)
    for tensor in model.graph.initializer:  # the BN scales and shifts stored as they are
        if tensor.data_type == onnx.TensorProto.FLOAT and tensor.name not in replaced:
            shape = numpy_helper.to_array(tensor).shape
            replaced[tensor.name] = numpy_helper.from_array(rng.uniform(0.5, 1.5, shape).astype(np.float32), tensor.name)
    nodes = [n for n in model.graph.node if not (n.op_type == "ConstantOfShape" and n.output[0] in replaced)]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    kept = [t for t in model.graph.initializer if t.name not in replaced]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept + list(replaced.values()))
    declared = {i.name for i in model.graph.input}  # IR version 3: initializers are inputs too
    model.graph.input.extend(
        onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, numpy_helper.to_array(t).shape)
        for name, t in replaced.items()
        if name not in declared
    )
    return model


def test_light_resnet50(rng):
    module = import_model(light_resnet50(rng))
    names = graph_ops(module)
    assert names.count("graph.conv2d") == 53 and "graph.gemm" in names
    after, collected = lower(module, rng, trials=1)
    assert sum(isinstance(op, ops.Conv2dOp) for op in after.walk()) == 53
    assert collected.get(PASS.name, "graph.conv2d lowered") == 53


def test_identity_pools_lower_to_nothing(rng):
    """A pool with a 1×1 window, stride 1 and no padding is its input: no op.pool2d is
    made (one launch fewer in VGG), the equivalence check still holds."""
    for name in ("avg_pool2d_identity", "max_pool2d_identity_nhwc"):
        b = ModelBuilder()
        after, _ = lower(b.finish(CASES[name](b, rng)), rng)
        assert "op.pool2d" not in op_names(after), name
