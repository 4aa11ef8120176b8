"""One converter per ONNX op: `(NodeContext) -> list of output values`.

A converter emits graph ops with `ctx.emit` and returns their results, or returns numpy
arrays for values it can compute at import (Shape, Constant, ...). Inputs that must be
static (shapes, pads, axes, scales) are read with `ctx.constant`, which explains the
problem when they are not.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from xdsl.ir import Operation, SSAValue

from boltir.dialects import graph
from boltir.dialects.shapes import broadcast_shapes
from boltir.dtypes import element_type_for
from boltir.frontends.onnx_attention import convert_attention
from boltir.frontends.gather_elements import gather_elements
from boltir.frontends.onnx_context import NodeContext, Value, check_constant_size, node_label, onnx_dtype, tensor_array
from boltir.frontends.registry import registrar

Converter = Callable[[NodeContext], list[Value]]
CONVERTERS: dict[str, Converter] = {}
"""The converter of each ONNX op type."""

converter = registrar(CONVERTERS)


def result(op) -> list[Value]:
    return list(op.results)


# ------------------------------------------------------------------- values at import


@converter("Constant")
def convert_constant(ctx: NodeContext) -> list[Value]:
    for name, value in ctx.attrs.items():
        ctx.attr(name)
        if name == "value":
            return [tensor_array(value, f"{ctx.describe()}: its value")]
        if name == "value_float":
            return [np.array(value, np.float32)]
        if name == "value_floats":
            return [np.array(value, np.float32)]
        if name == "value_int":
            return [np.array(value, np.int64)]
        if name == "value_ints":
            return [np.array(value, np.int64)]
        raise ctx.unsupported(name, "...", "value, value_float(s), value_int(s)")
    raise ctx.error("has no value attribute")


@converter("ConstantOfShape")
def convert_constant_of_shape(ctx: NodeContext) -> list[Value]:
    shape = ctx.constant(0, "shape")
    if shape is None or shape.ndim != 1:
        raise ctx.error(f"input 0 (shape) must be a 1-D tensor, got shape {None if shape is None else list(shape.shape)}")
    shape = tuple(int(d) for d in shape)
    check_constant_size(shape, ctx.describe())
    value = ctx.attr("value")
    fill = tensor_array(value, f"{ctx.describe()}: its value").reshape(-1) if value is not None else np.zeros(1, np.float32)
    if fill.size != 1:
        raise ctx.error(f"attribute value must hold one element, it holds {fill.size}")
    return [np.full(shape, fill[0], dtype=fill.dtype)]


@converter("Shape")
def convert_shape(ctx: NodeContext) -> list[Value]:
    shape = ctx.shape(0)
    start, end = ctx.attr("start", 0), ctx.attr("end", None)
    return [np.array(shape[slice(start, end)], dtype=np.int64)]


@converter("Size")
def convert_size(ctx: NodeContext) -> list[Value]:
    return [np.array(math.prod(ctx.shape(0)), dtype=np.int64)]


@converter("Range")
def convert_range(ctx: NodeContext) -> list[Value]:
    start, limit, delta = (ctx.constant(i, name) for i, name in enumerate(("start", "limit", "delta")))
    if any(v.size != 1 for v in (start, limit, delta)):
        raise ctx.error(f"start, limit and delta must be scalars, their shapes are {[list(v.shape) for v in (start, limit, delta)]}")
    if not np.isfinite(np.array([start, limit, delta], np.float64)).all() or delta.item() == 0:
        raise ctx.error(f"cannot count from {start.item()} to {limit.item()} in steps of {delta.item()}")
    check_constant_size((max(math.ceil((limit.item() - start.item()) / delta.item()), 0),), ctx.describe())
    return [np.arange(start.item(), limit.item(), delta.item()).astype(start.dtype)]


@converter("Identity")
def convert_identity(ctx: NodeContext) -> list[Value]:
    return [ctx.inputs[0]]


@converter("Dropout")
def convert_dropout(ctx: NodeContext) -> list[Value]:
    ctx.attr("seed")  # inference: dropout is the identity, whatever the seed and ratio
    ctx.attr("ratio")
    training = ctx.constant(2, "training_mode")
    if training is not None and training.size != 1:
        raise ctx.error(f"input 2 (training_mode) must be one boolean, it has shape {list(training.shape)}")
    if training is not None and bool(training.item()):
        raise ctx.error("training_mode is set; boltir compiles inference only")
    if ctx.output_used(1):
        raise ctx.error("its mask output is used; boltir compiles inference only")
    return [ctx.inputs[0]]


# ---------------------------------------------------------------------- elementwise


BINARY = {
    "Add": graph.AddOp,
    "Sub": graph.SubOp,
    "Mul": graph.MulOp,
    "Div": graph.DivOp,
    "Equal": graph.EqualOp,
    "Greater": graph.GreaterOp,
    "GreaterOrEqual": graph.GreaterOrEqualOp,
    "Less": graph.LessOp,
    "LessOrEqual": graph.LessOrEqualOp,
    "And": graph.AndOp,
    "Or": graph.OrOp,
    "Xor": graph.XorOp,
}


@converter(*BINARY)
def convert_binary(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(BINARY[ctx.op_type](ctx.value(0), ctx.value(1))))


@converter("Pow")
def convert_pow(ctx: NodeContext) -> list[Value]:
    """ONNX lets the exponent's type differ from the base's: an integer base with a
    float exponent is raised in float and truncated back, as the reference does."""
    base, exponent = ctx.value(0), ctx.value(1)
    base_type, exponent_type = base.type.element_type, exponent.type.element_type
    if exponent_type == base_type:
        return result(ctx.emit(graph.PowOp(base, exponent)))
    if graph.is_float(base_type) or not graph.is_float(exponent_type):
        exponent = ctx.emit(graph.CastOp(exponent, base_type)).output
        return result(ctx.emit(graph.PowOp(base, exponent)))
    widened = ctx.emit(graph.CastOp(base, exponent_type)).output
    power = ctx.emit(graph.PowOp(widened, exponent)).output
    return result(ctx.emit(graph.CastOp(power, base_type)))


@converter("Sum")
def convert_sum(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(graph.SumOp([ctx.value(i) for i in range(len(ctx.inputs))])))


@converter("Where")
def convert_where(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(graph.WhereOp(ctx.value(0), ctx.value(1), ctx.value(2))))


UNARY = {
    "Relu": graph.ReluOp,
    "Sigmoid": graph.SigmoidOp,
    "Tanh": graph.TanhOp,
    "HardSwish": graph.HardSwishOp,
    "Erf": graph.ErfOp,
    "Sqrt": graph.SqrtOp,
    "Exp": graph.ExpOp,
    "Neg": graph.NegOp,
    "Reciprocal": graph.ReciprocalOp,
    "Not": graph.NotOp,
}


@converter(*UNARY)
def convert_unary(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(UNARY[ctx.op_type](ctx.value(0))))


@converter("LeakyRelu")
def convert_leaky_relu(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(graph.LeakyReluOp(ctx.value(0), ctx.attr("alpha", 0.01))))


@converter("HardSigmoid")
def convert_hard_sigmoid(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(graph.HardSigmoidOp(ctx.value(0), ctx.attr("alpha", 0.2), ctx.attr("beta", 0.5))))


@converter("Gelu")
def convert_gelu(ctx: NodeContext) -> list[Value]:
    approximate = ctx.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ctx.unsupported("approximate", approximate, "none, tanh")
    return result(ctx.emit(graph.GeluOp(ctx.value(0), approximate)))


@converter("Clip")
def convert_clip(ctx: NodeContext) -> list[Value]:
    low = ctx.constant(1, "min")
    high = ctx.constant(2, "max")
    low = None if low is None else float(np.asarray(low).reshape(-1)[0])
    high = None if high is None else float(np.asarray(high).reshape(-1)[0])
    return result(ctx.emit(graph.ClipOp(ctx.value(0), low, high)))


@converter("Cast")
def convert_cast(ctx: NodeContext) -> list[Value]:
    target = onnx_dtype(ctx.attr("to"), f"{ctx.describe()}: its target")
    round_mode = ctx.attr("round_mode", "up")
    if round_mode not in graph.CastOp.ROUND_MODES:
        raise ctx.unsupported("round_mode", round_mode, ", ".join(graph.CastOp.ROUND_MODES))
    source = ctx.value(0)
    element_type = element_type_for(target)
    if source.type.element_type == element_type:
        return [source]
    op = graph.CastOp(source, element_type, saturate=bool(ctx.attr("saturate", 1)), round_mode=round_mode)
    return result(ctx.emit(op))


# --------------------------------------------------------------------- conv and pool


def explicit_pads(ctx: NodeContext, spatial: tuple[int, ...], kernel, strides, dilations) -> list[int]:
    """ONNX pads (all begins, then all ends), with auto_pad resolved for static shapes."""
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    rank = len(spatial)
    if auto_pad in ("NOTSET", ""):
        pads = list(ctx.attr("pads", [0] * (2 * rank)))
        if len(pads) != 2 * rank:
            raise ctx.error(f"attribute pads={pads} must have {2 * rank} values, a begin and an end per spatial axis")
        return pads
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.unsupported("auto_pad", auto_pad, "NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations, strict=True):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def check_window(ctx: NodeContext, rank: int, **attributes) -> None:
    """Refuses window attributes (kernel_shape, strides, dilations) that do not give each
    of the `rank` spatial axes one positive size."""
    for name, values in attributes.items():
        if len(values) != rank or any(v < 1 for v in values):
            raise ctx.error(f"attribute {name}={list(values)} must give each of the {rank} spatial axes a positive size")


def to_2d_pads(pads: list[int]) -> tuple[int, int, int, int]:
    """1-D pads (begin, end) -> 2-D (top, left, bottom, right) with a unit height."""
    if len(pads) == 2:
        return (0, pads[0], 0, pads[1])
    return tuple(pads)


def emit_as_2d(ctx: NodeContext, rank: int, make_op: Callable[..., Operation], *operands: SSAValue) -> list[Value]:
    """Emits the 2-D conv or pool `make_op(*operands)`; 1-D operands (N×C×L) run as
    N×C×1×L, and the result is squeezed back."""
    if rank == 1:
        operands = tuple(ctx.emit(graph.UnsqueezeOp(value, [2])).output for value in operands)
    output = ctx.emit(make_op(*operands)).output
    return [ctx.emit(graph.SqueezeOp(output, [2])).output if rank == 1 else output]


def spatial_rank(ctx: NodeContext) -> int:
    rank = len(ctx.shape(0)) - 2
    if rank not in (1, 2):
        raise ctx.error(f"only 1-D and 2-D {ctx.op_type} is supported, this one is {rank}-D")
    return rank


def pair(values, rank: int, fill: int = 1) -> tuple[int, int]:
    values = list(values) if values is not None else [fill] * rank
    return (1, values[0]) if rank == 1 else tuple(values)


def window_2d(rank: int, strides, pads: list[int], dilations=None) -> dict[str, tuple[int, ...]]:
    """The strides, pads (and dilations) keywords of a 2-D conv or pool op, from the
    node's 1-D or 2-D attributes."""
    window = {"strides": pair(strides, rank), "pads": to_2d_pads(pads)}
    if dilations is not None:
        window["dilations"] = pair(dilations, rank)
    return window


class ConvInputs(NamedTuple):
    """What Conv and ConvTranspose read alike."""

    rank: int
    """1 or 2 spatial axes."""
    x: SSAValue
    w: SSAValue
    bias: SSAValue | None
    kernel: list[int]
    strides: list[int]
    dilations: list[int]
    group: int


def conv_inputs(ctx: NodeContext) -> ConvInputs:
    rank = spatial_rank(ctx)
    x, w = ctx.value(0), ctx.value(1)
    bias = ctx.value(2) if ctx.has_input(2) else None
    if len(ctx.shape(1)) != rank + 2:
        raise ctx.error(f"its weight has shape {list(ctx.shape(1))}, but a {rank}-D {ctx.op_type} needs rank {rank + 2}")
    kernel = ctx.attr("kernel_shape", list(ctx.shape(1)[2:]))
    strides = ctx.attr("strides", [1] * rank)
    dilations = ctx.attr("dilations", [1] * rank)
    check_window(ctx, rank, kernel_shape=kernel, strides=strides, dilations=dilations)
    return ConvInputs(rank, x, w, bias, kernel, strides, dilations, ctx.attr("group", 1))


@converter("Conv")
def convert_conv(ctx: NodeContext) -> list[Value]:
    conv = conv_inputs(ctx)
    rank = conv.rank
    pads = explicit_pads(ctx, ctx.shape(0)[2:], conv.kernel, conv.strides, conv.dilations)

    def conv2d(x: SSAValue, w: SSAValue) -> Operation:
        return graph.Conv2dOp(x, w, conv.bias, **window_2d(rank, conv.strides, pads, conv.dilations), group=conv.group)

    return emit_as_2d(ctx, rank, conv2d, conv.x, conv.w)


def conv_transpose_padding(ctx: NodeContext, rank: int, kernel, strides, dilations) -> tuple[list[int], list[int]]:
    """ConvTranspose's pads and output_padding; output_shape or auto_pad SAME, where
    given, set the pads (and grow output_padding where the pads cannot reach the size)."""
    output_padding = list(ctx.attr("output_padding", [0] * rank))
    spatial = ctx.shape(0)[2:]
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    output_shape = ctx.attr("output_shape")
    explicit = list(ctx.attr("pads", [0] * (2 * rank)))  # ignored when output_shape is given
    if auto_pad not in ("NOTSET", "", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise ctx.unsupported("auto_pad", auto_pad, "NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    for name, values, count in (("output_padding", output_padding, rank), ("pads", explicit, 2 * rank),
                                ("output_shape", output_shape, rank)):
        if values is not None and len(values) not in (count, rank + 2 if name == "output_shape" else count):
            raise ctx.error(f"attribute {name}={list(values)} does not fit a {rank}-D ConvTranspose: it needs {count} values")
    if output_shape is None and auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        return ([0] * (2 * rank) if auto_pad == "VALID" else explicit), output_padding
    if output_shape is None:
        output_shape = [size * s for size, s in zip(spatial, strides, strict=True)]
    output_shape = list(output_shape)[-rank:]
    begins, ends = [], []
    for axis in range(rank):
        total = (
            strides[axis] * (spatial[axis] - 1)
            + output_padding[axis]
            + (kernel[axis] - 1) * dilations[axis]
            + 1
            - output_shape[axis]
        )
        if total < 0:
            output_padding[axis] -= total
            total = 0
        # The ONNX spec: SAME_UPPER puts the smaller half first, anything else the larger.
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends, output_padding


@converter("ConvTranspose")
def convert_conv_transpose(ctx: NodeContext) -> list[Value]:
    conv = conv_inputs(ctx)
    rank = conv.rank
    pads, output_padding = conv_transpose_padding(ctx, rank, conv.kernel, conv.strides, conv.dilations)

    def conv_transpose(x: SSAValue, w: SSAValue) -> Operation:
        return graph.ConvTranspose2dOp(
            x,
            w,
            conv.bias,
            **window_2d(rank, conv.strides, pads, conv.dilations),
            group=conv.group,
            output_padding=pair(output_padding, rank, 0) if rank == 2 else (0, output_padding[0]),
        )

    return emit_as_2d(ctx, rank, conv_transpose, conv.x, conv.w)


def pool_attributes(ctx: NodeContext, rank: int):
    kernel = ctx.attr("kernel_shape")
    if kernel is None:
        raise ctx.error("has no kernel_shape")
    strides = ctx.attr("strides", [1] * rank)
    dilations = ctx.attr("dilations", [1] * rank)
    check_window(ctx, rank, kernel_shape=kernel, strides=strides, dilations=dilations)
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER") and ctx.attr("ceil_mode", 0):
        raise ctx.error("auto_pad SAME with ceil_mode is not supported")
    pads = explicit_pads(ctx, ctx.shape(0)[2:], kernel, strides, dilations)
    return kernel, strides, dilations, pads


@converter("MaxPool")
def convert_max_pool(ctx: NodeContext) -> list[Value]:
    if ctx.output_used(1):
        raise ctx.error("its Indices output is not supported")
    ctx.attr("storage_order")
    rank = spatial_rank(ctx)
    kernel, strides, dilations, pads = pool_attributes(ctx, rank)
    x = ctx.value(0)
    ceil_mode = bool(ctx.attr("ceil_mode", 0))

    def max_pool(x: SSAValue) -> Operation:
        return graph.MaxPool2dOp(x, pair(kernel, rank), **window_2d(rank, strides, pads, dilations), ceil_mode=ceil_mode)

    return emit_as_2d(ctx, rank, max_pool, x)


@converter("AveragePool")
def convert_average_pool(ctx: NodeContext) -> list[Value]:
    rank = spatial_rank(ctx)
    kernel, strides, dilations, pads = pool_attributes(ctx, rank)
    if any(d != 1 for d in dilations):
        raise ctx.unsupported("dilations", list(dilations), "all 1 for AveragePool")
    x = ctx.value(0)
    ceil_mode = bool(ctx.attr("ceil_mode", 0))
    count_include_pad = bool(ctx.attr("count_include_pad", 0))

    def average_pool(x: SSAValue) -> Operation:
        return graph.AvgPool2dOp(
            x, pair(kernel, rank), **window_2d(rank, strides, pads), ceil_mode=ceil_mode, count_include_pad=count_include_pad
        )

    return emit_as_2d(ctx, rank, average_pool, x)


@converter("GlobalAveragePool")
def convert_global_average_pool(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(graph.GlobalAvgPoolOp(ctx.value(0))))


@converter("GlobalMaxPool")
def convert_global_max_pool(ctx: NodeContext) -> list[Value]:
    rank = len(ctx.shape(0))
    return result(ctx.emit(graph.ReduceMaxOp(ctx.value(0), list(range(2, rank)), keepdims=True)))


# -------------------------------------------------------------------- linear algebra


@converter("MatMul")
def convert_matmul(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(graph.MatMulOp(ctx.value(0), ctx.value(1))))


@converter("Gemm")
def convert_gemm(ctx: NodeContext) -> list[Value]:
    c = ctx.value(2) if ctx.has_input(2) else None
    op = graph.GemmOp(
        ctx.value(0),
        ctx.value(1),
        c,
        alpha=ctx.attr("alpha", 1.0),
        beta=ctx.attr("beta", 1.0),
        trans_a=bool(ctx.attr("transA", 0)),
        trans_b=bool(ctx.attr("transB", 0)),
    )
    return result(ctx.emit(op))


@converter("BatchNormalization")
def convert_batch_norm(ctx: NodeContext) -> list[Value]:
    if ctx.attr("training_mode", 0):
        raise ctx.error("training_mode is set; boltir compiles inference only")
    if any(ctx.output_used(i) for i in range(1, 5)):
        raise ctx.error("its running-statistics outputs are used; boltir compiles inference only")
    ctx.attr("momentum")
    ctx.attr("spatial")
    op = graph.BatchNormOp(*(ctx.value(i) for i in range(5)), epsilon=ctx.attr("epsilon", 1e-5))
    return result(ctx.emit(op))


# ----------------------------------------------------------- normalization, reduction


@converter("Softmax")
def convert_softmax(ctx: NodeContext) -> list[Value]:
    shape = ctx.shape(0)
    if ctx.opset >= 13:
        return result(ctx.emit(graph.SoftmaxOp(ctx.value(0), ctx.attr("axis", -1))))
    # Before opset 13, Softmax flattens to 2-D at `axis` and normalizes each row.
    axis = ctx.attr("axis", 1) % max(len(shape), 1)
    x = ctx.value(0)
    if axis == len(shape) - 1:
        return result(ctx.emit(graph.SoftmaxOp(x, -1)))
    rows = ctx.emit(graph.FlattenOp(x, axis)).output
    normalized = ctx.emit(graph.SoftmaxOp(rows, -1)).output
    return result(ctx.emit(graph.ReshapeOp(normalized, shape)))


@converter("LayerNormalization")
def convert_layer_norm(ctx: NodeContext) -> list[Value]:
    ctx.attr("stash_type")
    axis, epsilon = ctx.attr("axis", -1), ctx.attr("epsilon", 1e-5)
    x = ctx.value(0)
    bias = ctx.value(2) if ctx.has_input(2) else None
    outputs = result(ctx.emit(graph.LayerNormOp(x, ctx.value(1), bias, axis=axis, epsilon=epsilon)))
    if ctx.output_used(1) or ctx.output_used(2):
        outputs += layer_norm_statistics(ctx, x, axis, epsilon)
    return outputs


def layer_norm_statistics(ctx: NodeContext, x: SSAValue, axis: int, epsilon: float) -> list[Value]:
    """LayerNormalization's optional Mean and InvStdDev outputs, from graph ops."""
    rank = len(ctx.shape(0))
    axes = list(range(axis % rank, rank))
    mean = ctx.emit(graph.ReduceMeanOp(x, axes, keepdims=True)).output
    centered = ctx.emit(graph.SubOp(x, mean)).output
    squared = ctx.emit(graph.MulOp(centered, centered)).output
    variance = ctx.emit(graph.ReduceMeanOp(squared, axes, keepdims=True)).output
    eps = ctx.importer.materialize("", np.array(epsilon, dtype=ctx.dtype(0)))
    shifted = ctx.emit(graph.AddOp(variance, eps)).output
    inv_std = ctx.emit(graph.ReciprocalOp(ctx.emit(graph.SqrtOp(shifted)).output)).output
    return [mean, inv_std]


REDUCE = {"ReduceMean": graph.ReduceMeanOp, "ReduceSum": graph.ReduceSumOp, "ReduceMax": graph.ReduceMaxOp}


@converter(*REDUCE)
def convert_reduce(ctx: NodeContext) -> list[Value]:
    axes_from_input = ctx.op_type == "ReduceSum" and ctx.opset >= 13 or ctx.opset >= 18
    axes = ctx.constant(1, "axes") if axes_from_input else ctx.attr("axes")
    axes = [] if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]
    keepdims = bool(ctx.attr("keepdims", 1))
    noop_with_empty_axes = bool(ctx.attr("noop_with_empty_axes", 0))
    rank = len(ctx.shape(0))
    if not axes:
        if noop_with_empty_axes:
            return [ctx.inputs[0]]
        axes = list(range(rank))
    if rank == 0:
        return [ctx.inputs[0]]
    return result(ctx.emit(REDUCE[ctx.op_type](ctx.value(0), axes, keepdims)))


# --------------------------------------------------------------------- data movement


@converter("Reshape")
def convert_reshape(ctx: NodeContext) -> list[Value]:
    requested = [int(d) for d in ctx.constant(1, "shape").reshape(-1)]
    source = ctx.shape(0)
    allow_zero = bool(ctx.attr("allowzero", 0))
    if not allow_zero and any(d == 0 for d in requested[len(source) :]):
        raise ctx.error(f"shape {requested} copies a size (0) from beyond the input's rank {len(source)}")
    target = [source[i] if d == 0 and not allow_zero else d for i, d in enumerate(requested)]
    if target.count(-1) > 1:
        raise ctx.error(f"shape {requested} has more than one -1")
    if -1 in target:
        known = math.prod(d for d in target if d != -1)
        if known == 0 or math.prod(source) % known:
            raise ctx.error(f"cannot reshape {'x'.join(map(str, source))} ({math.prod(source)} elements) into {requested}")
        target[target.index(-1)] = math.prod(source) // known
    return result(ctx.emit(graph.ReshapeOp(ctx.value(0), target)))


@converter("Flatten")
def convert_flatten(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(graph.FlattenOp(ctx.value(0), ctx.attr("axis", 1))))


@converter("Transpose")
def convert_transpose(ctx: NodeContext) -> list[Value]:
    rank = len(ctx.shape(0))
    perm = ctx.attr("perm", list(reversed(range(rank))))
    return result(ctx.emit(graph.TransposeOp(ctx.value(0), perm)))


@converter("Concat")
def convert_concat(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(graph.ConcatOp([ctx.value(i) for i in range(len(ctx.inputs))], ctx.attr("axis"))))


@converter("Split")
def convert_split(ctx: NodeContext) -> list[Value]:
    shape = ctx.shape(0)
    axis = ctx.axis(ctx.attr("axis", 0), len(shape))
    size = shape[axis]
    count = len(ctx.node.output)
    sizes = ctx.constant(1, "split") if ctx.opset >= 13 else ctx.attr("split")
    if sizes is not None and len(np.asarray(sizes).reshape(-1)) > 0:
        sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
    elif (num_outputs := ctx.attr("num_outputs")) is not None:
        if num_outputs < 1:
            raise ctx.unsupported("num_outputs", num_outputs, "a positive count")
        chunk = -(-size // num_outputs)
        sizes = [min(chunk, size - i * chunk) for i in range(num_outputs)]
    else:
        sizes = [size // count] * count
    return result(ctx.emit(graph.SplitOp(ctx.value(0), sizes, axis)))


@converter("Slice")
def convert_slice(ctx: NodeContext) -> list[Value]:
    starts = [int(v) for v in ctx.constant(1, "starts").reshape(-1)]
    ends = [int(v) for v in ctx.constant(2, "ends").reshape(-1)]
    axes = ctx.constant(3, "axes")
    steps = ctx.constant(4, "steps")
    axes = list(range(len(starts))) if axes is None else [int(v) for v in axes.reshape(-1)]
    steps = [1] * len(starts) if steps is None else [int(v) for v in steps.reshape(-1)]
    return result(ctx.emit(graph.SliceOp(ctx.value(0), starts, ends, axes, steps)))


def axes_operand(ctx: NodeContext) -> list[int] | None:
    axes = ctx.constant(1, "axes") if ctx.opset >= 13 else ctx.attr("axes")
    return None if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]


@converter("Squeeze")
def convert_squeeze(ctx: NodeContext) -> list[Value]:
    axes = axes_operand(ctx)
    if axes is None:
        axes = [i for i, d in enumerate(ctx.shape(0)) if d == 1]
    return result(ctx.emit(graph.SqueezeOp(ctx.value(0), axes)))


@converter("Unsqueeze")
def convert_unsqueeze(ctx: NodeContext) -> list[Value]:
    axes = axes_operand(ctx)
    if axes is None:
        raise ctx.error("has no axes")
    return result(ctx.emit(graph.UnsqueezeOp(ctx.value(0), axes)))


@converter("Pad")
def convert_pad(ctx: NodeContext) -> list[Value]:
    mode = ctx.attr("mode", "constant")
    if mode not in graph.PadOp.MODES:
        raise ctx.unsupported("mode", mode, ", ".join(graph.PadOp.MODES))
    rank = len(ctx.shape(0))
    pads = [int(p) for p in ctx.constant(1, "pads").reshape(-1)]
    value = ctx.constant(2, "constant_value")
    axes = ctx.constant(3, "axes")
    if axes is not None:
        axes = [ctx.axis(int(a), rank, "axes entry") for a in axes.reshape(-1)]
        full = [0] * (2 * rank)
        for i, axis in enumerate(axes):
            full[axis], full[axis + rank] = pads[i], pads[i + len(axes)]
        pads = full
    value = 0.0 if value is None or value.size == 0 else float(value.reshape(-1)[0])
    return result(ctx.emit(graph.PadOp(ctx.value(0), pads, mode, value)))


RESIZE_COORDINATE_MODES = graph.ResizeOp.COORDINATE_MODES


def resize_roi(ctx: NodeContext, rank: int, axes: list[int], coordinate_mode: str) -> list[float] | None:
    """tf_crop_and_resize's region of interest over all axes (starts, then ends)."""
    if coordinate_mode != "tf_crop_and_resize":
        return None
    given = ctx.constant(1, "roi")
    if given is None or given.size != 2 * len(axes):
        raise ctx.error(f"tf_crop_and_resize needs a roi of {2 * len(axes)} values")
    roi = [0.0] * rank + [1.0] * rank
    for i, a in enumerate(axes):
        roi[a], roi[a + rank] = float(given[i]), float(given[i + len(axes)])
    return roi


def resize_target(
    ctx: NodeContext, axes: list[int], roi: list[float] | None, scales: np.ndarray | None, sizes: np.ndarray | None
) -> tuple[list[float], list[int]]:
    """Resize's scale and output size of every axis, from its sizes or scales input."""
    check_resize_target(ctx, axes, scales, sizes)
    scales, sizes = (None if v is None else v.reshape(-1) for v in (scales, sizes))
    shape = ctx.shape(0)
    rank = len(shape)
    full_scales = [1.0] * rank
    full_sizes = list(shape)
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")  # read always: scales ignore it
    if sizes is not None and sizes.size:
        sizes = [int(s) for s in sizes]
        if policy in ("not_larger", "not_smaller"):
            ratios = [sizes[i] / shape[a] for i, a in enumerate(axes)]
            ratio = min(ratios) if policy == "not_larger" else max(ratios)
            sizes = [int(round(shape[a] * ratio)) for a in axes]
            for a in axes:
                full_scales[a] = ratio
        elif policy != "stretch":
            raise ctx.unsupported("keep_aspect_ratio_policy", policy, "stretch, not_larger, not_smaller")
        else:
            for i, a in enumerate(axes):
                full_scales[a] = sizes[i] / shape[a]
        for i, a in enumerate(axes):
            full_sizes[a] = sizes[i]
    elif scales is not None and scales.size:
        for i, a in enumerate(axes):
            extent = shape[a] * (roi[a + rank] - roi[a]) if roi else shape[a]
            full_scales[a] = float(scales[i])
            full_sizes[a] = int(math.floor(extent * float(scales[i])))
    else:
        raise ctx.error("has neither scales nor sizes")
    return full_scales, full_sizes


def check_resize_target(ctx: NodeContext, axes: list[int], scales: np.ndarray | None, sizes: np.ndarray | None) -> None:
    """Refuses sizes or scales that do not give each resized axis one positive value."""
    shape = ctx.shape(0)
    for what, given in (("sizes", sizes), ("scales", scales)):
        if given is None or not given.size:
            continue
        if given.size != len(axes):
            raise ctx.error(f"{what} has {given.size} values, but the node resizes {len(axes)} axes")
        if not np.isfinite(given.astype(np.float64)).all() or (given <= 0).any():
            raise ctx.error(f"{what} {given.reshape(-1).tolist()} must be positive")
        if what == "sizes" and any(shape[a] == 0 for a in axes):
            raise ctx.error(f"cannot resize the input {list(shape)} to sizes: an axis it resizes is empty")
        return


@converter("Resize")
def convert_resize(ctx: NodeContext) -> list[Value]:
    rank = len(ctx.shape(0))
    mode = ctx.attr("mode", "nearest")
    if mode not in graph.ResizeOp.MODES:
        raise ctx.unsupported("mode", mode, ", ".join(graph.ResizeOp.MODES))
    coordinate_mode = ctx.attr("coordinate_transformation_mode", "half_pixel")
    if coordinate_mode not in RESIZE_COORDINATE_MODES:
        raise ctx.unsupported("coordinate_transformation_mode", coordinate_mode, ", ".join(RESIZE_COORDINATE_MODES))
    nearest_mode = ctx.attr("nearest_mode", "round_prefer_floor")
    if ctx.attr("antialias", 0):
        raise ctx.unsupported("antialias", 1, "0")
    scales = ctx.constant(2, "scales")
    sizes = ctx.constant(3, "sizes")
    axes = [ctx.axis(a, rank, "axes entry") for a in ctx.attr("axes", list(range(rank)))]
    roi = resize_roi(ctx, rank, axes, coordinate_mode)
    full_scales, full_sizes = resize_target(ctx, axes, roi, scales, sizes)
    op = graph.ResizeOp(
        ctx.value(0),
        full_scales,
        mode=mode,
        coordinate_transformation_mode=coordinate_mode,
        nearest_mode=nearest_mode,
        sizes=full_sizes,
        cubic_coeff_a=ctx.attr("cubic_coeff_a", -0.75),
        exclude_outside=bool(ctx.attr("exclude_outside", 0)),
        roi=roi,
        extrapolation_value=ctx.attr("extrapolation_value", 0.0),
    )
    return result(ctx.emit(op))


@converter("Upsample")
def convert_upsample(ctx: NodeContext) -> list[Value]:
    mode = ctx.attr("mode", "nearest")
    if mode not in graph.ResizeOp.MODES:
        raise ctx.unsupported("mode", mode, ", ".join(graph.ResizeOp.MODES))
    scales = ctx.constant(1, "scales") if ctx.has_input(1) else np.array(ctx.attr("scales"), np.float32)
    shape = ctx.shape(0)
    scales = scales.reshape(-1)
    if scales.size != len(shape) or not np.isfinite(scales.astype(np.float64)).all() or (scales <= 0).any():
        raise ctx.error(f"scales {scales.tolist()} must give each of the input's {len(shape)} axes a positive scale")
    sizes = [int(math.floor(d * float(s))) for d, s in zip(shape, scales, strict=True)]
    op = graph.ResizeOp(
        ctx.value(0),
        [float(s) for s in scales],
        mode=mode,
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
        sizes=sizes,
    )
    return result(ctx.emit(op))


@converter("Gather")
def convert_gather(ctx: NodeContext) -> list[Value]:
    return result(ctx.emit(graph.GatherOp(ctx.value(0), ctx.value(1), ctx.attr("axis", 0))))


@converter("Expand")
def convert_expand(ctx: NodeContext) -> list[Value]:
    requested = tuple(int(d) for d in ctx.constant(1, "shape").reshape(-1))
    target = broadcast_shapes(ctx.shape(0), requested)
    return result(ctx.emit(graph.ExpandOp(ctx.value(0), target)))



# ------------------------------------------------------------------ space to depth


@converter("SpaceToDepth")
def convert_space_to_depth(ctx: NodeContext) -> list[Value]:
    block = int(ctx.attr("blocksize", 0))
    shape = ctx.shape(0)
    if len(shape) != 4:
        raise ctx.error(f"expects a 4-D N×C×H×W input, got {len(shape)}-D")
    if block < 1 or shape[2] % block or shape[3] % block:
        raise ctx.error(f"blocksize {block} must be positive and divide the height {shape[2]} and width {shape[3]}")
    mode = ctx.attr("mode", "DCR")  # the reference's attribute; the schema has DCR only
    if mode == "DCR":
        return result(ctx.emit(graph.SpaceToDepthOp(ctx.value(0), block)))
    if mode != "CRD":
        raise ctx.unsupported("mode", mode, "DCR, CRD")
    # CRD: channel c·b² + by·b + bx, as reshape, transpose and reshape
    n, c, h, w = shape
    blocks = ctx.emit(graph.ReshapeOp(ctx.value(0), (n, c, h // block, block, w // block, block))).output
    moved = ctx.emit(graph.TransposeOp(blocks, (0, 1, 3, 5, 2, 4))).output
    return result(ctx.emit(graph.ReshapeOp(moved, (n, c * block * block, h // block, w // block))))




# ---------------------------------------------------- running sums, element gathers


@converter("CumSum")
def convert_cumsum(ctx: NodeContext) -> list[Value]:
    axis = ctx.constant(1, "axis")
    if axis is None or axis.size != 1:
        raise ctx.error(f"input 1 (axis) must hold one integer, got {'none' if axis is None else list(axis.shape)}")
    axis = ctx.axis(int(axis.reshape(-1)[0]), len(ctx.shape(0)))
    flags = {"exclusive": bool(ctx.attr("exclusive", 0)), "reverse": bool(ctx.attr("reverse", 0))}
    return result(ctx.emit(graph.CumSumOp(ctx.value(0), axis, **flags)))


@converter("GatherElements")
def convert_gather_elements(ctx: NodeContext) -> list[Value]:
    axis = ctx.axis(ctx.attr("axis", 0), len(ctx.shape(0)))
    label = node_label(ctx.node)

    def constant(hint: str, array: np.ndarray) -> SSAValue:
        return ctx.importer.materialize(f"{label}.{hint}", array)

    return [gather_elements(ctx.emit, constant, ctx.value(0), ctx.value(1), axis, ctx.error)]


# ------------------------------------------------------------------------- attention

converter("Attention")(convert_attention)  # in onnx_attention.py

SUPPORTED_OPS = sorted(CONVERTERS)

STATIC_INPUTS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,),
    "Expand": (1,),
    "Slice": (1, 2, 3, 4),
    "Split": (1,),
    "Squeeze": (1,),
    "Unsqueeze": (1,),
    "Pad": (1, 2, 3),
    "Resize": (1, 2, 3),
    "Upsample": (1,),
    "Clip": (1, 2),
    "ReduceMean": (1,),
    "ReduceSum": (1,),
    "ReduceMax": (1,),
    "ConstantOfShape": (0,),
    "Range": (0, 1, 2),
    "Dropout": (1, 2),
    "CumSum": (1,),
}
"""Inputs that boltir needs at import (shapes, axes, pads, scales...): a model must give
them as initializers or compute them from static shapes."""
