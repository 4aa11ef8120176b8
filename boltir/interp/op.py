"""Numpy implementations of every `op` op.

The kernels both dialects compute (convs and pools through layout transposes, softmax,
layer norm, reductions, slicing, resize, pad, cast, the activations' math) are the
graph interpreter's, called from here; the epilogue, the activations by name and the
scalar `arith`/`math` bodies of `op.elementwise` (evaluated on whole arrays at once) are
implemented here, once, for every op that needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation

from boltir.dialects import op as ops
from boltir.dtypes import numpy_dtype
from boltir.interp import graph as graph_kernels
from boltir.interp.graph import CHANNELS_FIRST, CHANNELS_LAST, contiguous, finish, widen
from boltir.interp.special import erf
from boltir.weights import constant_array


# ------------------------------------------------------------------- activations


def activation(kind: str, args: Sequence[float], x: np.ndarray) -> np.ndarray:
    """The activations an epilogue or `op.unary` applies, in x's (compute) dtype."""
    if kind in ("none", "identity"):
        return x
    if kind == "relu":
        return np.maximum(x, 0)
    if kind == "clip":
        # lower-graph-to-op writes a missing bound as ops.UNBOUNDED (the largest f64);
        # one that the tensor's type cannot hold bounds nothing (and must not overflow
        # when cast).
        low, high = (None if x.dtype.kind == "f" and abs(a) > float(np.finfo(x.dtype).max) else a for a in args)
        return graph_kernels.clip(x, low, high)
    if kind == "gelu":
        return graph_kernels.gelu(x, "none")
    if kind == "gelu_tanh":
        return graph_kernels.gelu(x, "tanh")
    if kind == "sigmoid":
        return graph_kernels.sigmoid(x)
    if kind == "silu":
        return graph_kernels.silu(x)
    if kind == "hardswish":
        return graph_kernels.hardswish(x)
    if kind == "tanh":
        return np.tanh(x)
    if kind == "leaky_relu":
        return graph_kernels.leaky_relu(x, args[0])
    if kind == "hardsigmoid":
        return graph_kernels.hardsigmoid(x, args[0], args[1])
    if kind == "erf":
        return erf(x).astype(x.dtype)
    if kind == "sqrt":
        return np.sqrt(x)
    if kind == "exp":
        return np.exp(x)
    if kind == "neg":
        return np.negative(x)
    if kind == "reciprocal":
        return np.reciprocal(x)
    if kind == "not":
        return np.logical_not(x)
    raise ValueError(f"unknown function {kind}")


def apply_epilogue(
    accumulator: np.ndarray,
    epilogue: ops.EpilogueAttr,
    bias: np.ndarray | None,
    residual: np.ndarray | None,
    channel_axis: int,
) -> np.ndarray:
    """`act2(act(alpha * acc + beta * bias) <residual> residual)`, in f32 (f64 for f64)."""
    out = epilogue.alpha.value.data * accumulator
    if bias is not None:
        shape = [1] * out.ndim
        shape[channel_axis] = -1
        out = out + epilogue.beta.value.data * widen(bias).reshape(shape)
    first = epilogue.first_activation
    out = activation(first.kind, first.args, out)
    if residual is not None:
        out = out + widen(residual) if epilogue.residual_kind == "add" else out * widen(residual)
    second = epilogue.second_activation
    return activation(second.kind, second.args, out)


# ---------------------------------------------------------------- GEMM and convs


def as_row_major(matrix: np.ndarray, layout: str) -> np.ndarray:
    return matrix if layout == "row" else np.swapaxes(matrix, -1, -2)


def gemm(a, b, layout_a: str, layout_b: str, epilogue, bias, residual) -> np.ndarray:
    acc = np.matmul(as_row_major(widen(a), layout_a), as_row_major(widen(b), layout_b))
    return apply_epilogue(acc, epilogue, bias, residual, channel_axis=-1)


def to_nchw(x: np.ndarray, layout: str) -> np.ndarray:
    return x if layout == "NCHW" else np.transpose(x, CHANNELS_FIRST)


def from_nchw(x: np.ndarray, layout: str) -> np.ndarray:
    return x if layout == "NCHW" else np.transpose(x, CHANNELS_LAST)


def conv2d(x, w, layout, filter_layout, strides, pads, dilations, groups, epilogue, bias, residual, out_shape):
    x_nchw = to_nchw(widen(x), layout)
    w_oihw = widen(w) if filter_layout == "OIHW" else np.transpose(widen(w), CHANNELS_FIRST)
    out_hw = tuple(out_shape[1:3]) if layout == "NHWC" else tuple(out_shape[2:4])
    acc = from_nchw(graph_kernels.conv2d(x_nchw, w_oihw, None, strides, pads, dilations, groups, out_hw), layout)
    return apply_epilogue(acc, epilogue, bias, residual, channel_axis=-1 if layout == "NHWC" else 1)



def space_to_depth_nchw(x: np.ndarray, layout: str, pads: Sequence[int], block: int, channels: int) -> np.ndarray:
    """op.space_to_depth's blocking as NCHW: `x` (in `layout`) padded by (top, left,
    bottom, right) `pads`, each block × block block in ONNX's channel order, zero channels
    up to `channels`."""
    x = x if layout == "NCHW" else np.transpose(x, CHANNELS_FIRST)
    top, left, bottom, right = pads
    x = graph_kernels.pad(x, (0, 0, top, left, 0, 0, bottom, right), "constant", 0.0)
    y = graph_kernels.space_to_depth(x, block)
    return np.pad(y, [(0, 0), (0, channels - y.shape[1]), (0, 0), (0, 0)])

@register_impls
class OpFunctions(InterpreterFunctions):
    """Interpreter implementations of the `op` dialect."""

    @impl(ops.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: ops.ConstantOp, args: tuple):
        return (constant_array(op.value),)

    @impl(ops.GemmOp)
    def run_gemm(self, interpreter: Interpreter, op: ops.GemmOp, args: tuple):
        a, b = args[:2]
        bias, residual = optional_operands(op, args, ("bias", "residual"))
        out = gemm(a, b, op.prop_value("layout_a"), op.prop_value("layout_b"), op.epilogue, bias, residual)
        return (finish(op, out),)

    @impl(ops.Conv2dOp)
    def run_conv2d(self, interpreter: Interpreter, op: ops.Conv2dOp, args: tuple):
        x, w = args[:2]
        bias, residual = optional_operands(op, args, ("bias", "residual"))
        strides, pads, dilations, groups = op.window()
        out = conv2d(
            x, w, op.prop_value("layout"), op.prop_value("filter_layout"), strides, pads, dilations, groups,
            op.epilogue, bias, residual, op.output.type.get_shape(),
        )
        return (finish(op, out),)

    @impl(ops.Conv2dMaxPoolOp)
    def run_conv2d_max_pool(self, interpreter: Interpreter, op: ops.Conv2dMaxPoolOp, args: tuple):
        x, w = args[:2]
        (bias,) = optional_operands(op, args, ("bias",))
        strides, pads, dilations, groups = op.window()
        conv = conv2d(x, w, "NHWC", "OHWI", strides, pads, dilations, groups, op.epilogue, bias, None, op.conv_shape())
        n, p, q, k = conv.shape
        pool = op.prop_value("pool")
        pooled = conv.reshape(n, p // pool, pool, q // pool, pool, k).max(axis=(2, 4))
        return (finish(op, pooled),)

    @impl(ops.SpaceToDepthConv2dOp)
    def run_space_to_depth_conv2d(self, interpreter: Interpreter, op: ops.SpaceToDepthConv2dOp, args: tuple):
        image, w = args[:2]
        bias, residual = optional_operands(op, args, ("bias", "residual"))
        blocked = space_to_depth_nchw(image, op.prop_value("image_layout"), op.prop_value("image_pads"),
                                      op.prop_value("blocksize"), op.blocked_shape()[3])
        # the blocked tensor is rounded to the filter's element type, as op.space_to_depth's result
        x = np.transpose(blocked, CHANNELS_LAST).astype(w.dtype)
        strides, pads, dilations, groups = op.window()
        out = conv2d(x, w, "NHWC", "OHWI", strides, pads, dilations, groups, op.epilogue, bias, residual, op.conv_shape())
        return (finish(op, out),)

    @impl(ops.ConvTranspose2dOp)
    def run_conv_transpose2d(self, interpreter: Interpreter, op: ops.ConvTranspose2dOp, args: tuple):
        x, w = args[:2]
        bias, residual = optional_operands(op, args, ("bias", "residual"))
        layout = op.prop_value("layout")
        w_iohw = widen(w) if op.prop_value("filter_layout") == "IOHW" else np.transpose(widen(w), CHANNELS_FIRST)
        strides, pads, dilations, groups = op.window()
        acc = graph_kernels.conv_transpose2d(
            to_nchw(widen(x), layout), w_iohw, None, strides, pads, dilations, groups, op.prop_value("output_padding")
        )
        out = apply_epilogue(from_nchw(acc, layout), op.epilogue, bias, residual, -1 if layout == "NHWC" else 1)
        return (finish(op, out),)

    @impl(ops.B2bGemmOp)
    def run_b2b_gemm(self, interpreter: Interpreter, op: ops.B2bGemmOp, args: tuple):
        a, b0, b1 = args[:3]
        bias0, bias1 = optional_operands(op, args, ("bias0", "bias1"))
        first = gemm(a, b0, op.prop_value("layout_a"), op.prop_value("layout_b0"), op.epilogue0, bias0, None)
        first = finish(op, first)  # the intermediate is kept in the output's element type
        out = gemm(first, b1, "row", op.prop_value("layout_b1"), op.epilogue1, bias1, None)
        return (finish(op, out),)

    @impl(ops.B2bConv2dOp)
    def run_b2b_conv2d(self, interpreter: Interpreter, op: ops.B2bConv2dOp, args: tuple):
        x, w0, w1 = args[:3]
        bias0, bias1 = optional_operands(op, args, ("bias0", "bias1"))
        layout, filter_layout = op.prop_value("layout"), op.prop_value("filter_layout")
        strides, pads, dilations = op.prop_value("strides"), op.prop_value("pads"), op.prop_value("dilations")
        out_shape = op.output.type.get_shape()
        first = conv2d(x, w0, layout, filter_layout, strides, pads, dilations, 1, op.epilogue0, bias0, None, out_shape)
        first = finish(op, first)
        out = conv2d(first, w1, layout, filter_layout, (1, 1), (0, 0, 0, 0), (1, 1), 1, op.epilogue1, bias1, None, out_shape)
        return (finish(op, out),)

    @impl(ops.DepthwisePointwiseConv2dOp)
    def run_depthwise_pointwise_conv2d(self, interpreter: Interpreter, op: ops.DepthwisePointwiseConv2dOp, args: tuple):
        x, w0, w1 = args[:3]
        bias0, bias1, residual, expand, expand_bias = optional_operands(
            op, args, ("bias0", "bias1", "residual", "expand", "expand_bias"))
        if expand is not None:  # rounded to the element type, as the expanding op's result
            x = finish(op, conv2d(x, expand, "NHWC", "OHWI", (1, 1), (0, 0, 0, 0), (1, 1), 1, op.expand_epilogue,
                                  expand_bias, None, op.expanded_shape()))
        strides, pads, dilations, groups = op.window()
        first = conv2d(x, w0, "NHWC", "OHWI", strides, pads, dilations, groups, op.epilogue0, bias0, None,
                       op.intermediate_shape())
        first = finish(op, first)  # rounded to the element type, as the depthwise op's result
        out = conv2d(first, w1, "NHWC", "OHWI", (1, 1), (0, 0, 0, 0), (1, 1), 1, op.epilogue1, bias1, residual,
                     op.output.type.get_shape())
        return (finish(op, out),)

    @impl(ops.Pool2dOp)
    def run_pool2d(self, interpreter: Interpreter, op: ops.Pool2dOp, args: tuple):
        layout, kind = op.prop_value("layout"), op.kind.data
        x = to_nchw(widen(args[0]), layout)
        if kind == "global_avg":
            out = x.mean(axis=(2, 3), keepdims=True)
        elif kind == "global_max":
            out = x.max(axis=(2, 3), keepdims=True)
        else:
            shape = op.output.type.get_shape()
            out_hw = tuple(shape[1:3]) if layout == "NHWC" else tuple(shape[2:4])
            out = graph_kernels.pool2d(
                x,
                op.prop_value("kernel_shape"),
                op.prop_value("strides"),
                op.prop_value("pads"),
                op.prop_value("dilations"),
                out_hw,
                kind,
                op.prop_value("count_include_pad"),
            )
        return (finish(op, from_nchw(out, layout)),)

    @impl(ops.SoftmaxOp)
    def run_softmax(self, interpreter: Interpreter, op: ops.SoftmaxOp, args: tuple):
        return (finish(op, graph_kernels.softmax(widen(args[0]), op.prop_value("axis"))),)

    @impl(ops.LayerNormOp)
    def run_layer_norm(self, interpreter: Interpreter, op: ops.LayerNormOp, args: tuple):
        x, scale, *bias = (widen(v) for v in args)
        out = graph_kernels.layer_norm(x, scale, bias[0] if bias else None, op.prop_value("axis"), op.prop_value("epsilon"))
        return (finish(op, out),)

    @impl(ops.ReduceOp)
    def run_reduce(self, interpreter: Interpreter, op: ops.ReduceOp, args: tuple):
        out = graph_kernels.reduce(op.kind.data, widen(args[0]), op.prop_value("axes"), op.prop_value("keepdims"))
        return (finish(op, out),)

    @impl(ops.CumSumOp)
    def run_cumsum(self, interpreter: Interpreter, op: ops.CumSumOp, args: tuple):
        flags = op.prop_value("exclusive"), op.prop_value("reverse")
        return (finish(op, graph_kernels.cumsum(widen(args[0]), op.prop_value("axis"), *flags)),)

    @impl(ops.ResizeOp)
    def run_resize(self, interpreter: Interpreter, op: ops.ResizeOp, args: tuple):
        return (finish(op, graph_kernels.resize_as(op, widen(args[0]))),)

    @impl(ops.GatherOp)
    def run_gather(self, interpreter: Interpreter, op: ops.GatherOp, args: tuple):
        data, indices = args
        return (contiguous(np.take(data, indices.astype(np.int64), axis=op.prop_value("axis"))),)

    @impl(ops.LayoutTransformOp)
    def run_layout_transform(self, interpreter: Interpreter, op: ops.LayoutTransformOp, args: tuple):
        return (contiguous(np.transpose(args[0], op.prop_value("perm"))),)

    @impl(ops.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: ops.ReshapeOp, args: tuple):
        return (args[0].reshape(op.output.type.get_shape()),)

    @impl(ops.PadOp)
    def run_pad(self, interpreter: Interpreter, op: ops.PadOp, args: tuple):
        return (finish(op, graph_kernels.pad(args[0], op.prop_value("pads"), op.prop_value("mode"), op.prop_value("value"))),)

    @impl(ops.SpaceToDepthOp)
    def run_space_to_depth(self, interpreter: Interpreter, op: ops.SpaceToDepthOp, args: tuple):
        y = space_to_depth_nchw(args[0], op.prop_value("layout"), op.prop_value("pads"), op.prop_value("blocksize"),
                                op.result_channels())
        return (finish(op, y if op.prop_value("result_layout") == "NCHW" else np.transpose(y, CHANNELS_LAST)),)

    @impl(ops.ConcatOp)
    def run_concat(self, interpreter: Interpreter, op: ops.ConcatOp, args: tuple):
        return (np.concatenate(args, axis=op.prop_value("axis")),)

    @impl(ops.SliceOp)
    def run_slice(self, interpreter: Interpreter, op: ops.SliceOp, args: tuple):
        starts, ends, axes, steps = (op.prop_value(name) for name in ("starts", "ends", "axes", "steps"))
        return (contiguous(graph_kernels.slice_array(args[0], starts, ends, axes, steps)),)

    @impl(ops.UnaryOp)
    def run_unary(self, interpreter: Interpreter, op: ops.UnaryOp, args: tuple):
        return (finish(op, activation(op.fn.data, op.prop_value("args"), widen(args[0]))),)

    @impl(ops.BinaryOp)
    def run_binary(self, interpreter: Interpreter, op: ops.BinaryOp, args: tuple):
        a, b = (widen(v) for v in args)
        return (finish(op, BINARY[op.fn.data](a, b)),)

    @impl(ops.SelectOp)
    def run_select(self, interpreter: Interpreter, op: ops.SelectOp, args: tuple):
        condition, a, b = args
        return (finish(op, np.where(condition, a, b)),)

    @impl(ops.CastOp)
    def run_cast(self, interpreter: Interpreter, op: ops.CastOp, args: tuple):
        target = numpy_dtype(op.output.type.element_type)
        return (contiguous(graph_kernels.cast(args[0], target, bool(op.prop_value("saturate")), op.prop_value("round_mode"))),)

    @impl(ops.ElementwiseOp)
    def run_elementwise(self, interpreter: Interpreter, op: ops.ElementwiseOp, args: tuple):
        shape = tuple(op.output.type.get_shape())
        inputs = [np.broadcast_to(value, shape) for value in args]
        return (finish(op, np.broadcast_to(evaluate_body(op, inputs), shape)),)

    @impl(ops.AttentionOp)
    def run_attention(self, interpreter: Interpreter, op: ops.AttentionOp, args: tuple):
        q, k, v, bias, key_lengths = (args[0], *optional_operands(op, args, ("k", "v", "bias", "key_lengths")))
        layout = op.prop_value("layout")
        q, k, v = attention_heads(layout, q, k, v)
        if key_lengths is not None:
            keys = np.arange(k.shape[2])
            attend = keys[None, :] < key_lengths.astype(np.int64)[:, None]
            padding = np.where(attend, 0.0, -np.inf).astype(np.float32)[:, None, None, :]
            bias = padding if bias is None else bias.astype(np.float32) + padding
        out = graph_kernels.attention(q, k, v, op.prop_value("scale"), bias, op.prop_value("causal"))
        return (finish(op, out if layout == "BHSD" else out.transpose(0, 2, 1, 3)),)


def optional_operands(op: Operation, args: tuple, names: Sequence[str]) -> list[np.ndarray | None]:
    """The values of an op's optional operands, None where absent, in `names` order."""
    present = {id(value): arg for value, arg in zip(op.operands, args, strict=True)}
    result = []
    for name in names:
        value = getattr(op, name)
        result.append(None if value is None else present[id(value)])
    return result


BINARY: dict[str, Callable] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": graph_kernels.divide,
    "pow": np.power,
    "equal": np.equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "and": np.logical_and,
    "or": np.logical_or,
    "xor": np.logical_xor,
}


def attention_heads(layout: str, q: np.ndarray, k, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An `op.attention`'s q, k and v as [B, H, S, D] arrays."""
    if layout == "BS3HD":
        heads = q.transpose(2, 0, 3, 1, 4)
        return heads[0], heads[1], heads[2]
    if layout == "BSHD":
        return tuple(x.transpose(0, 2, 1, 3) for x in (q, k, v))
    return q, k, v


# ------------------------------------------------------- elementwise bodies (arith, math)


def _unordered(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.isnan(a) | np.isnan(b)


def _ordered(compare: Callable) -> Callable:
    """An ordered predicate: false where either operand is NaN."""
    return lambda a, b: compare(a, b) & ~_unordered(a, b)


def _unordered_or(compare: Callable) -> Callable:
    """An unordered predicate: true where either operand is NaN."""
    return lambda a, b: compare(a, b) | _unordered(a, b)


def _as_unsigned(x: np.ndarray) -> np.ndarray:
    """The same bits read as an unsigned integer (arith's u* predicates)."""
    return x.astype(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.kind == "i" else x


def _unsigned(compare: Callable) -> Callable:
    return lambda a, b: compare(_as_unsigned(np.asarray(a)), _as_unsigned(np.asarray(b)))


CMPF_PREDICATES: dict[int, Callable] = {
    0: lambda a, b: np.zeros(np.broadcast(a, b).shape, dtype=np.bool_),  # false
    1: _ordered(np.equal),  # oeq
    2: _ordered(np.greater),  # ogt
    3: _ordered(np.greater_equal),  # oge
    4: _ordered(np.less),  # olt
    5: _ordered(np.less_equal),  # ole
    6: _ordered(np.not_equal),  # one
    7: lambda a, b: ~_unordered(a, b),  # ord
    8: _unordered_or(np.equal),  # ueq
    9: _unordered_or(np.greater),  # ugt
    10: _unordered_or(np.greater_equal),  # uge
    11: _unordered_or(np.less),  # ult
    12: _unordered_or(np.less_equal),  # ule
    13: _unordered_or(np.not_equal),  # une
    14: _unordered,  # uno
    15: lambda a, b: np.ones(np.broadcast(a, b).shape, dtype=np.bool_),  # true
}
"""arith.cmpf by predicate number: the o* predicates are false, the u* true, where an
operand is NaN (IEEE 754, as MLIR defines them)."""
CMPI_PREDICATES: dict[int, Callable] = {
    0: np.equal,
    1: np.not_equal,
    2: np.less,  # slt
    3: np.less_equal,
    4: np.greater,
    5: np.greater_equal,
    6: _unsigned(np.less),  # ult
    7: _unsigned(np.less_equal),
    8: _unsigned(np.greater),
    9: _unsigned(np.greater_equal),
}

SCALAR_FUNCTIONS: dict[type, Callable] = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.MaximumfOp: np.maximum,
    arith.MinimumfOp: np.minimum,
    arith.NegfOp: np.negative,
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.DivSIOp: graph_kernels.integer_divide,
    arith.MaxSIOp: np.maximum,
    arith.MinSIOp: np.minimum,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.SelectOp: np.where,
    math_dialect.ExpOp: np.exp,
    math_dialect.TanhOp: np.tanh,
    math_dialect.SqrtOp: np.sqrt,
    math_dialect.AbsFOp: np.abs,
    math_dialect.PowFOp: np.power,
    math_dialect.LogOp: np.log,
    math_dialect.ErfOp: lambda x: erf(x).astype(x.dtype),
    math_dialect.RsqrtOp: lambda x: 1 / np.sqrt(x),
    math_dialect.FloorOp: np.floor,
    math_dialect.CeilOp: np.ceil,
}
CONVERSIONS = (
    arith.ExtFOp,
    arith.TruncFOp,
    arith.SIToFPOp,
    arith.FPToSIOp,
    arith.ExtSIOp,
    arith.TruncIOp,
)


def evaluate_body(op: ops.ElementwiseOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Runs the scalar body on whole arrays: every SSA value of the body is an array."""
    block = op.body.block
    values: dict = {arg: np.asarray(value).astype(numpy_dtype(arg.type), copy=False) for arg, value in zip(block.args, inputs, strict=True)}
    for body_op in block.ops:
        if isinstance(body_op, ops.YieldOp):
            return values[body_op.operands[0]]
        operands = [values[o] for o in body_op.operands]
        result_type = body_op.results[0].type
        if isinstance(body_op, arith.ConstantOp):
            value = body_op.value
            scalar = value.value.data if isinstance(value, FloatAttr | IntegerAttr) else value
            result = np.asarray(scalar, dtype=numpy_dtype(result_type))
        elif isinstance(body_op, arith.CmpfOp | arith.CmpiOp):
            table = CMPF_PREDICATES if isinstance(body_op, arith.CmpfOp) else CMPI_PREDICATES
            result = table[body_op.predicate.value.data](*operands)
        elif isinstance(body_op, CONVERSIONS):
            target = numpy_dtype(result_type)
            source = operands[0]
            result = np.trunc(source).astype(target) if isinstance(body_op, arith.FPToSIOp) else source.astype(target)
        elif type(body_op) in SCALAR_FUNCTIONS:
            result = SCALAR_FUNCTIONS[type(body_op)](*operands)
        else:
            raise NotImplementedError(f"op.elementwise bodies cannot hold {body_op.name} yet")
        values[body_op.results[0]] = np.asarray(result).astype(numpy_dtype(result_type), copy=False)
    raise AssertionError("op.elementwise body without op.yield")

