"""Numpy implementations of every `graph` op, registered with `xdsl.interpreter`.

Values are numpy arrays of the op's element type. Floating-point ops compute in f32
(f64 for f64 tensors) and round to the result type once, as a GPU kernel with an f32
accumulator does; f16 and bf16 tensors would otherwise fall off numpy's BLAS paths.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from boltir.dialects import graph
from boltir.dialects.resize import (  # also importable from here
    interpolation_taps,
    nearest_indices,
    source_coordinates,
)
from boltir.dialects.shapes import slice_bounds
from boltir.dtypes import is_floating, numpy_dtype, numpy_dtype_named
from boltir.interp.special import erf
from boltir.weights import constant_array

CONV_TAP_CHUNK_BYTES = 64 << 20
"""Upper bound on the input slice a conv copies per kernel tap; bigger batches go in chunks."""


_wide = False


@contextmanager
def wide_arithmetic() -> Iterator[None]:
    """Inside, every floating op computes in f64, still rounding its result to its type
    once: the same rounding points as the default f32 arithmetic, with a more exact sum
    inside each op. Two runs that differ only so are equally valid at the model's
    precision; their difference is the model's own rounding noise (boltir.accuracy)."""
    global _wide
    previous, _wide = _wide, True
    try:
        yield
    finally:
        _wide = previous


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic runs in: f64 for f64 (and for every float inside
    `wide_arithmetic`), f32 for other floats, else unchanged."""
    if dtype == np.float64 or (_wide and is_floating(dtype)):
        return np.dtype(np.float64)
    if is_floating(dtype):
        return np.dtype(np.float32)
    return dtype


def result_dtype(op, index: int = 0) -> np.dtype:
    return numpy_dtype(op.results[index].type.element_type)


def widen(x: np.ndarray) -> np.ndarray:
    return x.astype(compute_dtype(x.dtype), copy=False)


def contiguous(value) -> np.ndarray:
    """A C-contiguous array of the same shape (`np.ascontiguousarray` makes 0-d arrays 1-d)."""
    return np.asarray(value, order="C")


def finish(op, value: np.ndarray, index: int = 0) -> np.ndarray:
    """Rounds a result to the op's declared element type, as a contiguous array."""
    return contiguous(np.asarray(value).astype(result_dtype(op, index), copy=False))


# ------------------------------------------------------------------------ unary math


def sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


def gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)).astype(x.dtype))


def silu(x: np.ndarray) -> np.ndarray:
    return x * sigmoid(x)


def hardswish(x: np.ndarray) -> np.ndarray:
    return x * np.clip(x / 6.0 + 0.5, 0.0, 1.0)


def hardsigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    return np.clip(alpha * x + beta, 0.0, 1.0)


def leaky_relu(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x >= 0, x, x * alpha)


def clip(x: np.ndarray, low: float | None, high: float | None) -> np.ndarray:
    """Clamps to [low, high]; integer tensors get integer bounds, so that they are not
    clipped through float64 (which rounds int64 values above 2**53)."""
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        if low is not None:
            low = x.dtype.type(min(max(math.ceil(low), info.min), info.max))
        if high is not None:
            high = x.dtype.type(min(max(math.floor(high), info.min), info.max))
    return np.clip(x, low, high)


UNARY_FUNCTIONS: dict[type, Any] = {
    graph.ReluOp: lambda op, x: np.maximum(x, 0),
    graph.LeakyReluOp: lambda op, x: leaky_relu(x, op.prop_value("alpha")),
    graph.GeluOp: lambda op, x: gelu(x, op.prop_value("approximate")),
    graph.SigmoidOp: lambda op, x: sigmoid(x),
    graph.TanhOp: lambda op, x: np.tanh(x),
    graph.SiluOp: lambda op, x: silu(x),
    graph.HardSwishOp: lambda op, x: hardswish(x),
    graph.HardSigmoidOp: lambda op, x: hardsigmoid(x, op.prop_value("alpha"), op.prop_value("beta")),
    graph.ClipOp: lambda op, x: clip(
        x,
        op.properties["min"].value.data if "min" in op.properties else None,
        op.properties["max"].value.data if "max" in op.properties else None,
    ),
    graph.ErfOp: lambda op, x: erf(x),
    graph.SqrtOp: lambda op, x: np.sqrt(x),
    graph.ExpOp: lambda op, x: np.exp(x),
    graph.NegOp: lambda op, x: np.negative(x),
    graph.ReciprocalOp: lambda op, x: np.reciprocal(x),
    graph.NotOp: lambda op, x: np.logical_not(x),
}


def integer_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ONNX integer Div truncates toward zero."""
    quotient = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -quotient, quotient)


def divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.divide(a, b) if a.dtype.kind == "f" else integer_divide(a, b)


BINARY_FUNCTIONS: dict[type, Any] = {
    graph.AddOp: np.add,
    graph.SubOp: np.subtract,
    graph.MulOp: np.multiply,
    graph.DivOp: divide,
    graph.PowOp: np.power,
    graph.EqualOp: np.equal,
    graph.GreaterOp: np.greater,
    graph.GreaterOrEqualOp: np.greater_equal,
    graph.LessOp: np.less,
    graph.LessOrEqualOp: np.less_equal,
    graph.AndOp: np.logical_and,
    graph.OrOp: np.logical_or,
    graph.XorOp: np.logical_xor,
}


# ----------------------------------------------------------------------------- cast

SATURATING_FLOAT8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")


def to_float8_e8m0(x: np.ndarray, saturate: bool, round_mode: str) -> np.ndarray:
    """f8E8M0FNU keeps only an f32's biased exponent; the mantissa decides the rounding.
    NaN and infinity become the NaN code 0xFF; saturation stops at the largest power 0xFE."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(np.uint16)
    mantissa = bits & 0x7FFFFF
    special = exponent == 0xFF
    if round_mode == "up":
        round_up = mantissa > 0
    elif round_mode == "nearest":
        half = np.uint32(0x400000)
        round_up = (mantissa > half) | ((mantissa == half) & (exponent > 0))
    else:
        round_up = np.zeros_like(special)
    round_up &= ~special
    if saturate:
        round_up &= exponent < 0xFE
    exponent = np.where(special, 0xFF, exponent + round_up).astype(np.uint8)
    return exponent.view(numpy_dtype_named("float8_e8m0fnu"))


def cast(x: np.ndarray, target: np.dtype, saturate: bool, round_mode: str) -> np.ndarray:
    """ONNX Cast: floats truncate to integers; 8-bit floats saturate when asked."""
    if target.name == "float8_e8m0fnu":
        return to_float8_e8m0(widen(x), saturate, round_mode)
    if saturate and target.name in SATURATING_FLOAT8 and is_floating(x.dtype):
        import ml_dtypes

        largest = float(ml_dtypes.finfo(target).max)
        wide = widen(x)
        return np.where(np.isnan(wide), wide, np.clip(wide, -largest, largest)).astype(target)
    if is_floating(x.dtype) and not is_floating(target) and target != np.bool_:
        x = np.trunc(widen(x))
    return x.astype(target)


# ----------------------------------------------------------------------------- conv


def strided_window(x: np.ndarray, start: tuple[int, int], step: tuple[int, int], count: tuple[int, int]):
    """x[..., start_h::step_h (count_h), start_w::step_w (count_w)]."""
    return x[
        ...,
        start[0] : start[0] + step[0] * (count[0] - 1) + 1 : step[0],
        start[1] : start[1] + step[1] * (count[1] - 1) + 1 : step[1],
    ]


# ------------------------------------------------------------------------- layouts
# NHWC convs and pools compute through the NCHW kernels below: the input is transposed
# to NCHW, the filter to ONNX's order, and the result back.

CHANNELS_LAST = (0, 2, 3, 1)
"""NCHW -> NHWC (and OIHW -> OHWI, IOHW -> IHWO)."""
CHANNELS_FIRST = (0, 3, 1, 2)
"""NHWC -> NCHW (and OHWI -> OIHW, IHWO -> IOHW)."""


def channels_last(op) -> bool:
    return graph.is_channels_last(op.prop_value("layout"))


def to_nchw(op, x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(x, CHANNELS_FIRST)) if channels_last(op) else x


def from_nchw(op, x: np.ndarray) -> np.ndarray:
    return np.transpose(x, CHANNELS_LAST) if channels_last(op) else x


def nchw_spatial(op, shape: tuple[int, ...]) -> tuple[int, int]:
    """The (H, W) of a 4-D shape in the op's layout."""
    return shape[1:3] if channels_last(op) else shape[2:4]


def to_onnx_filter(op, w: np.ndarray) -> np.ndarray:
    """A conv filter in ONNX's order (OIHW, or IOHW for conv_transpose2d)."""
    channels_last_filter = graph.FILTER_LAYOUTS[op.name][1]
    if op.prop_value("filter_layout") == channels_last_filter:
        return np.ascontiguousarray(np.transpose(w, CHANNELS_FIRST))
    return w


def conv2d(x, w, bias, strides, pads, dilations, group, out_hw) -> np.ndarray:
    """Direct convolution, one kernel tap at a time: memory stays near the output size,
    with no im2col buffer, and large batches are processed in chunks."""
    n, c, _, _ = x.shape
    m, cg, kh, kw = w.shape
    mg = m // group
    oh, ow = out_hw
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    wg = w.reshape(group, mg, cg, kh, kw)
    out = np.zeros((n, group, mg, oh * ow), dtype=x.dtype)
    batch_chunk = max(1, CONV_TAP_CHUNK_BYTES // max(1, c * oh * ow * x.itemsize))
    for lo in range(0, n, batch_chunk):
        hi = min(n, lo + batch_chunk)
        for i in range(kh):
            for j in range(kw):
                tap = strided_window(xp[lo:hi], (i * dilations[0], j * dilations[1]), strides, (oh, ow))
                tap = tap.reshape(hi - lo, group, cg, oh * ow)
                out[lo:hi] += np.matmul(wg[:, :, :, i, j], tap)
    out = out.reshape(n, m, oh, ow)
    if bias is not None:
        out += bias.reshape(1, m, 1, 1)
    return out


def conv_transpose2d(x, w, bias, strides, pads, dilations, group, output_padding) -> np.ndarray:
    """Scatters every input pixel through every kernel tap, then crops the pads."""
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    cg = c // group
    full_h = strides[0] * (h - 1) + (kh - 1) * dilations[0] + 1 + output_padding[0]
    full_w = strides[1] * (wd - 1) + (kw - 1) * dilations[1] + 1 + output_padding[1]
    full = np.zeros((n, group, mg, full_h, full_w), dtype=x.dtype)
    xg = x.reshape(n, group, cg, h * wd)
    wg = w.reshape(group, cg, mg, kh, kw)
    for i in range(kh):
        for j in range(kw):
            contribution = np.matmul(np.swapaxes(wg[:, :, :, i, j], 1, 2), xg).reshape(n, group, mg, h, wd)
            strided_window(full, (i * dilations[0], j * dilations[1]), strides, (h, wd))[...] += contribution
    out = full.reshape(n, group * mg, full_h, full_w)
    out = out[:, :, pads[0] : full_h - pads[2], pads[1] : full_w - pads[3]]
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out


# ---------------------------------------------------------------------------- pools


def pool2d(x, kernel, strides, pads, dilations, out_hw, reducer: str, count_include_pad: bool = False):
    """Max or average pooling; ceil-mode windows past the padding see nothing."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    extra_h = max(0, (oh - 1) * strides[0] + (kernel[0] - 1) * dilations[0] + 1 - (h + pads[0] + pads[2]))
    extra_w = max(0, (ow - 1) * strides[1] + (kernel[1] - 1) * dilations[1] + 1 - (w + pads[1] + pads[3]))
    padding = ((0, 0), (0, 0), (pads[0], pads[2] + extra_h), (pads[1], pads[3] + extra_w))
    if reducer == "max":
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = np.pad(x, padding, constant_values=fill)
        out = np.full((n, c, oh, ow), fill, dtype=x.dtype)
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                np.maximum(out, strided_window(xp, (i * dilations[0], j * dilations[1]), strides, (oh, ow)), out=out)
        return out
    xp = np.pad(x, padding)
    counted = np.ones((1, 1, h, w), dtype=x.dtype)
    if count_include_pad:
        counted = np.pad(counted, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=1)
        counted = np.pad(counted, ((0, 0), (0, 0), (0, extra_h), (0, extra_w)))
    else:
        counted = np.pad(counted, padding)
    total = np.zeros((n, c, oh, ow), dtype=x.dtype)
    divisor = np.zeros((1, 1, oh, ow), dtype=x.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            total += strided_window(xp, (i, j), strides, (oh, ow))
            divisor += strided_window(counted, (i, j), strides, (oh, ow))
    return total / divisor


# --------------------------------------------------------------------------- resize
# The per-axis coordinate maths is `boltir.dialects.resize`, which the CUDA kernels share.


def resize(
    x: np.ndarray,
    out_shape,
    scales,
    mode: str,
    coordinate_mode: str,
    nearest_mode: str,
    cubic_a: float = -0.75,
    exclude_outside: bool = False,
    roi=None,
    extrapolation_value: float = 0.0,
) -> np.ndarray:
    """Separable: one axis at a time. Nearest picks one input, linear blends two
    neighbours, cubic four; positions past the edge reuse the edge value."""
    rank = x.ndim
    for axis, (in_len, out_len, scale) in enumerate(zip(x.shape, out_shape, scales, strict=True)):
        axis_roi = (roi[axis], roi[axis + rank]) if roi else (0.0, 1.0)
        if in_len == out_len and scale == 1.0 and coordinate_mode != "tf_crop_and_resize":
            continue
        coords = source_coordinates(out_len, in_len, scale, coordinate_mode, axis_roi)
        if mode == "nearest":
            x = np.take(x, nearest_indices(coords, nearest_mode, in_len), axis=axis)
        else:
            indices, weights = interpolation_taps(coords, in_len, mode, cubic_a, exclude_outside)
            shape = [1] * rank
            shape[axis] = out_len
            blended = 0
            for tap in range(indices.shape[1]):
                blended = blended + np.take(x, indices[:, tap], axis=axis) * weights[:, tap].astype(x.dtype).reshape(shape)
            x = blended
        if coordinate_mode == "tf_crop_and_resize":
            outside = (coords < 0) | (coords > in_len - 1)
            index = [slice(None)] * rank
            index[axis] = outside
            x[tuple(index)] = extrapolation_value
    return x


def resize_as(op, x: np.ndarray) -> np.ndarray:
    """`resize` as a `graph.resize` or `op.resize` asks (they have the same properties)."""
    return resize(
        x,
        tuple(op.output.type.get_shape()),
        op.prop_value("scales"),
        op.prop_value("mode"),
        op.prop_value("coordinate_transformation_mode"),
        op.prop_value("nearest_mode"),
        op.prop_value("cubic_coeff_a"),
        op.prop_value("exclude_outside"),
        op.prop_value("roi") or None,
        op.prop_value("extrapolation_value"),
    )


# --------------------------------------------------------- normalization, reductions


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def layer_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None, axis: int, epsilon: float) -> np.ndarray:
    """Normalizes over the axes from `axis` on, then scales and shifts."""
    axes = tuple(range(axis % x.ndim, x.ndim))
    centered = x - x.mean(axis=axes, keepdims=True)
    variance = (centered * centered).mean(axis=axes, keepdims=True)
    out = centered / np.sqrt(variance + np.asarray(epsilon, dtype=x.dtype)) * scale
    return out + bias if bias is not None else out


def reduce(kind: str, x: np.ndarray, axes: Sequence[int], keepdims: bool) -> np.ndarray:
    """ReduceMean, ReduceSum or ReduceMax (`kind` "mean", "sum" or "max") over `axes`."""
    axes = tuple(a % x.ndim for a in axes)
    if kind == "max":
        # ONNX: the maximum of nothing is the lowest value of the type.
        lowest = -np.inf if x.dtype.kind == "f" else (False if x.dtype == np.bool_ else np.iinfo(x.dtype).min)
        return np.max(x, axis=axes, keepdims=keepdims, initial=lowest)
    return (np.mean if kind == "mean" else np.sum)(x, axis=axes, keepdims=keepdims)


def cumsum(x: np.ndarray, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """ONNX CumSum along `axis`, in x's dtype (integers wrap as they do in it)."""
    axis %= x.ndim
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        shifted = np.zeros_like(out)
        before = [slice(None)] * x.ndim
        after = [slice(None)] * x.ndim
        before[axis], after[axis] = slice(1, None), slice(None, -1)
        shifted[tuple(before)] = out[tuple(after)]
        out = shifted
    return np.flip(out, axis) if reverse else out


# ---------------------------------------------------------------------- data movement


def slice_array(x: np.ndarray, starts, ends, axes, steps) -> np.ndarray:
    """ONNX Slice: per axis, starts and ends clamped as `slice_bounds` says (a view)."""
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        begin, stop, stride = slice_bounds(start, end, step, x.shape[axis % x.ndim])
        index[axis % x.ndim] = slice(begin, None if stop < 0 else stop, stride)
    return x[tuple(index)]


def pad(x: np.ndarray, pads, mode: str, value: float) -> np.ndarray:
    rank = x.ndim
    begins, ends = pads[:rank], pads[rank:]
    crop = tuple(slice(max(0, -b), x.shape[i] - max(0, -e)) for i, (b, e) in enumerate(zip(begins, ends)))
    x = x[crop]
    widths = [(max(0, b), max(0, e)) for b, e in zip(begins, ends, strict=True)]
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=np.asarray(value).astype(x.dtype))
    return np.pad(x, widths, mode=mode)


# ------------------------------------------------------------------ space to depth


def space_to_depth(x: np.ndarray, block: int) -> np.ndarray:
    """ONNX SpaceToDepth of an N×C×H×W array: result channel (by·b + bx)·C + c."""
    n, c, h, w = x.shape
    blocks = x.reshape(n, c, h // block, block, w // block, block)
    return contiguous(blocks.transpose(0, 3, 5, 1, 2, 4).reshape(n, c * block * block, h // block, w // block))


# ----------------------------------------------------------------- implementations

# ------------------------------------------------------------------------- attention


def attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, mask: np.ndarray | None = None, causal: bool = False
) -> np.ndarray:
    """softmax(q @ kᵀ * scale + mask) @ v over [..., S, D] heads, in q's compute dtype.

    A boolean mask keeps the scores where it is true; `causal` masks key j for query i
    when j > i (top-left). A query whose keys are all masked gives zeros."""
    q, k, v = widen(q), widen(k), widen(v)
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * np.asarray(scale, dtype=q.dtype)
    if mask is not None:
        if mask.dtype == np.bool_:
            scores = np.where(mask, scores, -np.inf)
        else:
            scores = scores + mask.astype(q.dtype)
    if causal:
        sq, sk = scores.shape[-2:]
        scores = np.where(np.tril(np.ones((sq, sk), dtype=bool)), scores, -np.inf)
    # A row whose keys are all masked (all -inf) attends nothing and gives zeros.
    row_max = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isneginf(row_max), 0.0, row_max))
    total = weights.sum(axis=-1, keepdims=True)
    return np.matmul(weights / np.where(total == 0, 1.0, total), v)


REDUCE_KINDS = {graph.ReduceMeanOp: "mean", graph.ReduceSumOp: "sum", graph.ReduceMaxOp: "max"}
POOL_KINDS = {graph.MaxPool2dOp: "max", graph.AvgPool2dOp: "avg"}
RESHAPES = (graph.ReshapeOp, graph.FlattenOp, graph.SqueezeOp, graph.UnsqueezeOp)
"""Ops that only reshape: their result is their input with the result's shape."""


class GraphFunctions(InterpreterFunctions):
    """Interpreter implementations of the `graph` dialect."""

    @impl(graph.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: graph.ConstantOp, args: tuple):
        return (constant_array(op.value),)

    def _unary(self, interpreter: Interpreter, op, args: tuple):
        (x,) = args
        return (finish(op, UNARY_FUNCTIONS[type(op)](op, widen(x))),)

    def _binary(self, interpreter: Interpreter, op, args: tuple):
        a, b = (widen(v) for v in args)
        return (finish(op, BINARY_FUNCTIONS[type(op)](a, b)),)

    @impl(graph.CastOp)
    def run_cast(self, interpreter: Interpreter, op: graph.CastOp, args: tuple):
        (x,) = args
        return (contiguous(cast(x, result_dtype(op), bool(op.prop_value("saturate")), op.prop_value("round_mode"))),)

    @impl(graph.SumOp)
    def run_sum(self, interpreter: Interpreter, op: graph.SumOp, args: tuple):
        total = widen(args[0])
        for value in args[1:]:
            total = total + widen(value)
        return (finish(op, np.broadcast_to(total, op.output.type.get_shape())),)

    @impl(graph.WhereOp)
    def run_where(self, interpreter: Interpreter, op: graph.WhereOp, args: tuple):
        condition, a, b = args
        return (finish(op, np.where(condition, a, b)),)

    @impl(graph.Conv2dOp)
    def run_conv2d(self, interpreter: Interpreter, op: graph.Conv2dOp, args: tuple):
        x, w, *bias = (widen(v) for v in args)
        x, w = to_nchw(op, x), to_onnx_filter(op, w)
        out_hw = nchw_spatial(op, tuple(op.output.type.get_shape()))
        out = conv2d(
            x,
            w,
            bias[0] if bias else None,
            op.prop_value("strides"),
            op.prop_value("pads"),
            op.prop_value("dilations"),
            op.prop_value("group"),
            out_hw,
        )
        return (finish(op, from_nchw(op, out)),)

    @impl(graph.ConvTranspose2dOp)
    def run_conv_transpose2d(self, interpreter: Interpreter, op: graph.ConvTranspose2dOp, args: tuple):
        x, w, *bias = (widen(v) for v in args)
        x, w = to_nchw(op, x), to_onnx_filter(op, w)
        out = conv_transpose2d(
            x,
            w,
            bias[0] if bias else None,
            op.prop_value("strides"),
            op.prop_value("pads"),
            op.prop_value("dilations"),
            op.prop_value("group"),
            op.prop_value("output_padding"),
        )
        return (finish(op, from_nchw(op, out)),)

    @impl(graph.MatMulOp)
    def run_matmul(self, interpreter: Interpreter, op: graph.MatMulOp, args: tuple):
        a, b = (widen(v) for v in args)
        return (finish(op, np.matmul(a, b)),)

    @impl(graph.GemmOp)
    def run_gemm(self, interpreter: Interpreter, op: graph.GemmOp, args: tuple):
        a, b, *c = (widen(v) for v in args)
        a = a.T if op.prop_value("trans_a") else a
        b = b.T if op.prop_value("trans_b") else b
        out = op.prop_value("alpha") * np.matmul(a, b)
        if c:
            out = out + op.prop_value("beta") * c[0]
        return (finish(op, out),)

    @impl(graph.BatchNormOp)
    def run_batch_norm(self, interpreter: Interpreter, op: graph.BatchNormOp, args: tuple):
        x, scale, bias, mean, variance = (widen(v) for v in args)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        inv_std = 1.0 / np.sqrt(variance + np.asarray(op.prop_value("epsilon"), dtype=x.dtype))
        out = (x - mean.reshape(shape)) * (scale * inv_std).reshape(shape) + bias.reshape(shape)
        return (finish(op, out),)

    def _pool2d(self, interpreter: Interpreter, op, args: tuple):
        """max_pool2d, and avg_pool2d (no dilations; padding counted as it says)."""
        kind = POOL_KINDS[type(op)]
        out = pool2d(
            to_nchw(op, widen(args[0])),
            op.prop_value("kernel_shape"),
            op.prop_value("strides"),
            op.prop_value("pads"),
            op.prop_value("dilations") if kind == "max" else (1, 1),
            nchw_spatial(op, tuple(op.output.type.get_shape())),
            kind,
            kind == "avg" and op.prop_value("count_include_pad"),
        )
        return (finish(op, from_nchw(op, out)),)

    @impl(graph.GlobalAvgPoolOp)
    def run_global_avg_pool(self, interpreter: Interpreter, op: graph.GlobalAvgPoolOp, args: tuple):
        x = widen(args[0])
        spatial = tuple(range(1, x.ndim - 1)) if channels_last(op) else tuple(range(2, x.ndim))
        return (finish(op, x.mean(axis=spatial, keepdims=True)),)

    @impl(graph.SoftmaxOp)
    def run_softmax(self, interpreter: Interpreter, op: graph.SoftmaxOp, args: tuple):
        return (finish(op, softmax(widen(args[0]), op.prop_value("axis"))),)

    @impl(graph.LayerNormOp)
    def run_layer_norm(self, interpreter: Interpreter, op: graph.LayerNormOp, args: tuple):
        x, scale, *bias = (widen(v) for v in args)
        out = layer_norm(x, scale, bias[0] if bias else None, op.prop_value("axis"), op.prop_value("epsilon"))
        return (finish(op, out),)

    @impl(graph.CumSumOp)
    def run_cumsum(self, interpreter: Interpreter, op: graph.CumSumOp, args: tuple):
        flags = op.prop_value("exclusive"), op.prop_value("reverse")
        return (finish(op, cumsum(widen(args[0]), op.prop_value("axis"), *flags)),)

    def _reduce(self, interpreter: Interpreter, op, args: tuple):
        out = reduce(REDUCE_KINDS[type(op)], widen(args[0]), op.prop_value("axes"), op.prop_value("keepdims"))
        return (finish(op, out),)

    def _reshape(self, interpreter: Interpreter, op, args: tuple):
        return (args[0].reshape(op.output.type.get_shape()),)

    @impl(graph.ExpandOp)
    def run_expand(self, interpreter: Interpreter, op: graph.ExpandOp, args: tuple):
        return (contiguous(np.broadcast_to(args[0], op.output.type.get_shape())),)

    @impl(graph.TransposeOp)
    def run_transpose(self, interpreter: Interpreter, op: graph.TransposeOp, args: tuple):
        return (contiguous(np.transpose(args[0], op.prop_value("perm"))),)

    @impl(graph.ConcatOp)
    def run_concat(self, interpreter: Interpreter, op: graph.ConcatOp, args: tuple):
        return (np.concatenate(args, axis=op.prop_value("axis")),)

    @impl(graph.SplitOp)
    def run_split(self, interpreter: Interpreter, op: graph.SplitOp, args: tuple):
        boundaries = np.cumsum(op.prop_value("sizes"))[:-1]
        return tuple(contiguous(p) for p in np.split(args[0], boundaries, axis=op.prop_value("axis")))

    @impl(graph.SliceOp)
    def run_slice(self, interpreter: Interpreter, op: graph.SliceOp, args: tuple):
        starts, ends, axes, steps = (op.prop_value(name) for name in ("starts", "ends", "axes", "steps"))
        return (contiguous(slice_array(args[0], starts, ends, axes, steps)),)

    @impl(graph.PadOp)
    def run_pad(self, interpreter: Interpreter, op: graph.PadOp, args: tuple):
        out = pad(args[0], op.prop_value("pads"), op.prop_value("mode"), op.prop_value("value"))
        return (finish(op, out),)

    @impl(graph.SpaceToDepthOp)
    def run_space_to_depth(self, interpreter: Interpreter, op: graph.SpaceToDepthOp, args: tuple):
        return (space_to_depth(args[0], op.prop_value("blocksize")),)

    @impl(graph.ResizeOp)
    def run_resize(self, interpreter: Interpreter, op: graph.ResizeOp, args: tuple):
        return (finish(op, resize_as(op, widen(args[0]))),)

    @impl(graph.GatherOp)
    def run_gather(self, interpreter: Interpreter, op: graph.GatherOp, args: tuple):
        data, indices = args
        return (contiguous(np.take(data, indices.astype(np.int64), axis=op.prop_value("axis"))),)

    @impl(graph.AttentionOp)
    def run_attention(self, interpreter: Interpreter, op: graph.AttentionOp, args: tuple):
        q, k, v, *mask = args
        out = attention(q, k, v, op.prop_value("scale"), mask[0] if mask else None, op.prop_value("causal"))
        return (finish(op, out),)


def _register_shared_implementations() -> None:
    """Ops that share one implementation get it under one generated method each."""
    shared = [
        (UNARY_FUNCTIONS, GraphFunctions._unary),
        (BINARY_FUNCTIONS, GraphFunctions._binary),
        (REDUCE_KINDS, GraphFunctions._reduce),
        (POOL_KINDS, GraphFunctions._pool2d),
        (RESHAPES, GraphFunctions._reshape),
    ]
    for op_types, implementation in shared:
        for op_type in op_types:
            method_name = "run_" + op_type.name.removeprefix("graph.")
            setattr(GraphFunctions, method_name, impl(op_type)(implementation))


_register_shared_implementations()
register_impls(GraphFunctions)
