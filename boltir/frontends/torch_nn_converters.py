"""Converters of neural-network ATen ops: linear algebra, convolution, normalization,
pooling, reductions, softmax and resizing (see `torch_converters.py` for the form)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from boltir.dialects import graph
from boltir.dtypes import numpy_dtype
from boltir.frontends.gather_elements import gather_elements
from boltir.frontends.registry import registrar
from boltir.frontends.torch_context import Converter, NodeContext, is_fx_node, normalize_arguments, normalized_axis, op_display_name

NAMED_CONVERTERS: dict[str, Converter] = {}
"""The converter of each ATen overload, by `packet.overload` name."""

converter = registrar(NAMED_CONVERTERS)


# ------------------------------------------------------------------ linear algebra


def _transposed_source(ctx: NodeContext, name: str):
    """The FX node that a 2-D transpose argument transposes, or None."""
    node = ctx.node_arg(name)
    if node is None or node.op != "call_function":
        return None
    args = normalize_arguments(node)
    source = args.get("self")
    if not is_fx_node(source) or len(source.meta["val"].shape) != 2:
        return None
    name_of = op_display_name(node.target)
    if name_of in ("aten.t.default", "aten.numpy_T.default"):
        return source
    if name_of in ("aten.permute.default", "aten.permute_copy.default") and [d % 2 for d in args["dims"]] == [1, 0]:
        return source
    if name_of in ("aten.transpose.int", "aten.transpose_copy.int") and args["dim0"] % 2 != args["dim1"] % 2:
        return source
    return None


def _gemm_operands(ctx: NodeContext, a_name: str, b_name: str):
    """The two matrices, with a transpose that only feeds them folded into the gemm."""
    operands = []
    for name in (a_name, b_name):
        source = _transposed_source(ctx, name)
        if source is not None:
            operands.append((ctx.importer.as_value(source, ctx.out_dtype, cast=False, ctx=ctx), True))
        else:
            operands.append((ctx.value(name), False))
    return operands


@converter("addmm.default")
def convert_addmm(ctx: NodeContext):
    beta, alpha = ctx.arg("beta", 1), ctx.arg("alpha", 1)
    if ctx.out_dtype.kind != "f":
        if beta != 1 or alpha != 1:
            raise ctx.unsupported("alpha/beta on integer addmm", "alpha = beta = 1")
        product = ctx.out1(graph.MatMulOp(ctx.value("mat1"), ctx.value("mat2")))
        return ctx.out1(graph.AddOp(product, ctx.value("self")))
    (a, trans_a), (b, trans_b) = _gemm_operands(ctx, "mat1", "mat2")
    c = ctx.value("self") if beta != 0 else None
    return ctx.out1(graph.GemmOp(a, b, c, alpha=float(alpha), beta=float(beta), trans_a=trans_a, trans_b=trans_b))


@converter("mm.default")
def convert_mm(ctx: NodeContext):
    if ctx.out_dtype.kind == "f":
        (a, trans_a), (b, trans_b) = _gemm_operands(ctx, "self", "mat2")
        if trans_a or trans_b:
            return ctx.out1(graph.GemmOp(a, b, trans_a=trans_a, trans_b=trans_b))
    return ctx.out1(graph.MatMulOp(ctx.value("self"), ctx.value("mat2")))


@converter("bmm.default", "matmul.default")
def convert_matmul(ctx: NodeContext):
    other = "mat2" if "mat2" in ctx.args else "other"
    return ctx.out1(graph.MatMulOp(ctx.value("self"), ctx.value(other)))


@converter("baddbmm.default")
def convert_baddbmm(ctx: NodeContext):
    product = ctx.out1(graph.MatMulOp(ctx.value("batch1", ctx.out_dtype), ctx.value("batch2", ctx.out_dtype)))
    product = ctx.scale(product, ctx.arg("alpha", 1))
    beta = ctx.arg("beta", 1)
    if beta == 0:
        return product
    return ctx.out1(graph.AddOp(product, ctx.scale(ctx.value("self", ctx.out_dtype), beta)))


@converter("linear.default")
def convert_linear(ctx: NodeContext):
    x, weight = ctx.value("input"), ctx.value("weight")
    bias = ctx.value("bias") if ctx.has("bias") else None
    if len(x.type.get_shape()) == 2 and ctx.out_dtype.kind == "f":
        return ctx.out1(graph.GemmOp(x, weight, bias, trans_b=True))
    out = ctx.out1(graph.MatMulOp(x, ctx.out1(graph.TransposeOp(weight, [1, 0]))))
    return ctx.out1(graph.AddOp(out, bias)) if bias is not None else out


@converter("embedding.default")
def convert_embedding(ctx: NodeContext):
    return ctx.out1(graph.GatherOp(ctx.value("weight"), ctx.value("indices"), 0))


@converter("index.Tensor")
def convert_index(ctx: NodeContext):
    """Advanced indexing with one index tensor: a gather along its axis."""
    indices = list(ctx.raw("indices"))
    used = [axis for axis, index in enumerate(indices) if index is not None]
    if len(used) != 1:
        raise ctx.unsupported(f"indexing with {len(used)} index tensors", "exactly one index tensor (a gather)")
    (axis,) = used
    index = indices[axis]
    dtype = ctx.importer.meta_dtype(index, f"the index of {ctx.describe()}")
    if dtype is None or dtype.kind != "i":  # uint8 and bool indices are masks in torch
        what = f"a {dtype or 'non-tensor'} index"
        raise ctx.unsupported(what, "integer index tensors (masks give data-dependent shapes)")
    cast = dtype not in (np.int32, np.int64)
    indices_value = ctx.importer.as_value(index, np.dtype(np.int64), cast=cast, ctx=ctx)
    return ctx.out1(graph.GatherOp(ctx.value("self"), indices_value, axis))


@converter("index_select.default")
def convert_index_select(ctx: NodeContext):
    axis = normalized_axis(ctx.arg("dim"), ctx.rank("self"))
    return ctx.out1(graph.GatherOp(ctx.value("self"), ctx.value("index"), axis))


@converter("gather.default")
def convert_gather(ctx: NodeContext):
    """torch.gather: out[i][j] = self[i][index[i][j]] along `dim` (gather_elements.py)."""
    axis = normalized_axis(ctx.arg("dim"), ctx.rank("self"))
    index = ctx.value("index")
    return gather_elements(ctx.emit, lambda hint, array: ctx.constant(array, f"{ctx.node.name}.{hint}"),
                           ctx.value("self"), index, axis, ctx.error)


@converter("cumsum.default")
def convert_cumsum(ctx: NodeContext):
    """torch.cumsum: the input in the result's dtype (`dtype`, or int64 for integers and
    booleans), summed along `dim`."""
    x = ctx.value("self", ctx.out_dtype)
    if not x.type.get_shape():  # a 0-d tensor is its own running sum
        return x
    return ctx.out1(graph.CumSumOp(x, normalized_axis(ctx.arg("dim"), ctx.rank("self"))))


# -------------------------------------------------------------------- conv, pools


def _pair(values, name: str, ctx: NodeContext) -> tuple[int, int]:
    values = [values] if isinstance(values, int) else list(values)
    if len(values) == 1:
        values = values * 2
    if len(values) != 2:
        raise ctx.error(f"{name} must have 1 or 2 values, got {values}")
    return int(values[0]), int(values[1])


@converter("convolution.default", "_convolution.default")
def convert_convolution(ctx: NodeContext):
    rank = ctx.rank("input")
    if rank not in (3, 4):
        raise ctx.unsupported(f"a {rank - 2}-D convolution", "1-D and 2-D convolutions (3-D and 4-D inputs)")
    spatial = rank - 2
    x, weight = ctx.value("input"), ctx.value("weight")
    bias = ctx.value("bias") if ctx.has("bias") else None
    stride, padding, dilation = (list(ctx.arg(n)) for n in ("stride", "padding", "dilation"))
    output_padding = list(ctx.arg("output_padding") or [0] * spatial)
    if spatial == 1:  # N×C×L runs as N×C×1×L
        x = ctx.out1(graph.UnsqueezeOp(x, [2]))
        weight = ctx.out1(graph.UnsqueezeOp(weight, [2]))
        stride, padding, dilation, output_padding = [1, *stride], [0, *padding], [1, *dilation], [0, *output_padding]
    stride = _pair(stride, "stride", ctx)
    padding = _pair(padding, "padding", ctx)
    dilation = _pair(dilation, "dilation", ctx)
    output_padding = _pair(output_padding, "output_padding", ctx)
    pads = (padding[0], padding[1], padding[0], padding[1])
    groups = int(ctx.arg("groups", 1))
    if ctx.arg("transposed"):
        conv = graph.ConvTranspose2dOp(
            x, weight, bias, strides=stride, pads=pads, dilations=dilation, group=groups, output_padding=output_padding
        )
        out = ctx.out1(conv)
    else:
        if any(output_padding):
            raise ctx.unsupported("output_padding on a convolution that is not transposed", "output_padding 0")
        out = ctx.out1(graph.Conv2dOp(x, weight, bias, strides=stride, pads=pads, dilations=dilation, group=groups))
    if spatial == 1:
        out = ctx.out1(graph.SqueezeOp(out, [2]))
    return out


def _batch_norm(ctx: NodeContext, training: bool):
    if training:
        raise ctx.error("batch norm in training mode; boltir compiles inference only: call module.eval()")
    x = ctx.value("input")
    channels = ctx.shape("input")[1]
    dtype = ctx.dtype("input")
    scale = ctx.value("weight") if ctx.has("weight") else ctx.constant(np.ones(channels, dtype), "batch_norm.ones")
    bias = ctx.value("bias") if ctx.has("bias") else ctx.constant(np.zeros(channels, dtype), "batch_norm.zeros")
    if not ctx.has("running_mean") or not ctx.has("running_var"):
        raise ctx.error("batch norm without running statistics (track_running_stats=False) is not supported")
    mean, variance = ctx.value("running_mean"), ctx.value("running_var")
    out = ctx.out1(graph.BatchNormOp(x, scale, bias, mean, variance, epsilon=float(ctx.arg("eps"))))
    return (out, None, None)


def _normalize_trailing(ctx: NodeContext, x: SSAValue, rows_shape: Sequence[int], epsilon: float) -> SSAValue:
    """Normalizes `x` (mean 0, variance 1) over each row of `x` viewed as `rows_shape`
    plus one trailing axis, and returns it in `x`'s shape: a layer norm without affine."""
    shape = tuple(x.type.get_shape())
    rows = ctx.reshape(x, (*rows_shape, math.prod(shape) // math.prod(rows_shape)))
    ones = ctx.constant(np.ones(1, numpy_dtype(x.type.element_type)), "ones")
    normalized = ctx.out1(graph.LayerNormOp(rows, ones, None, axis=-1, epsilon=epsilon))
    return ctx.reshape(normalized, shape)


def _channel_affine(ctx: NodeContext, x: SSAValue, rank: int) -> SSAValue:
    """`x * weight + bias` with per-channel (axis 1) weight and bias, where given."""
    for name, op_class in (("weight", graph.MulOp), ("bias", graph.AddOp)):
        if ctx.has(name):
            value = ctx.value(name)
            per_channel = ctx.reshape(value, (value.type.get_shape()[0],) + (1,) * (rank - 2))
            x = ctx.out1(op_class(x, per_channel))
    return x


def _batch_statistics_norm(ctx: NodeContext):
    """Batch norm with the batch's own statistics (InstanceNorm runs as one on N·C
    channels): each channel normalized over the batch and spatial axes."""
    shape = ctx.shape("input")
    x = ctx.value("input")
    perm = [1, 0, *range(2, len(shape))]
    channels_first = x if shape[0] == 1 else ctx.out1(graph.TransposeOp(x, perm))
    channels_first = ctx.reshape(channels_first, [shape[1], shape[0], *shape[2:]])
    normalized = _normalize_trailing(ctx, channels_first, [shape[1]], float(ctx.arg("eps")))
    normalized = ctx.reshape(normalized, [shape[1], shape[0], *shape[2:]])
    out = ctx.reshape(normalized, shape) if shape[0] == 1 else ctx.out1(graph.TransposeOp(normalized, perm))
    return (_channel_affine(ctx, out, len(shape)), None, None)


@converter("_native_batch_norm_legit.no_stats")
def convert_batch_norm_no_stats(ctx: NodeContext):
    if not ctx.arg("training"):
        raise ctx.error("batch norm in eval mode without running statistics has nothing to normalize with")
    return _batch_statistics_norm(ctx)


@converter("native_group_norm.default")
def convert_group_norm(ctx: NodeContext):
    shape = ctx.shape("input")
    groups = int(ctx.arg("group"))
    normalized = _normalize_trailing(ctx, ctx.value("input"), [shape[0], groups], float(ctx.arg("eps")))
    return (_channel_affine(ctx, normalized, len(shape)), None, None)


@converter("_native_batch_norm_legit_no_training.default")
def convert_batch_norm_no_training(ctx: NodeContext):
    return _batch_norm(ctx, False)


@converter("_native_batch_norm_legit.default", "native_batch_norm.default")
def convert_batch_norm(ctx: NodeContext):
    return _batch_norm(ctx, bool(ctx.arg("training")))


@converter("native_layer_norm.default")
def convert_layer_norm(ctx: NodeContext):
    normalized = list(ctx.arg("normalized_shape"))
    x = ctx.value("input")
    dtype = ctx.dtype("input")
    scale = ctx.value("weight") if ctx.has("weight") else ctx.constant(np.ones(normalized, dtype), "layer_norm.ones")
    bias = ctx.value("bias") if ctx.has("bias") else None
    out = ctx.out1(graph.LayerNormOp(x, scale, bias, axis=-len(normalized), epsilon=float(ctx.arg("eps"))))
    return (out, None, None)


def _pool_params(ctx: NodeContext):
    kernel = _pair(ctx.arg("kernel_size"), "kernel_size", ctx)
    stride_arg = ctx.arg("stride")
    stride = kernel if not stride_arg else _pair(stride_arg, "stride", ctx)
    padding = _pair(ctx.arg("padding", 0), "padding", ctx)
    return kernel, stride, (padding[0], padding[1], padding[0], padding[1])


@converter("max_pool2d_with_indices.default", "max_pool2d.default")
def convert_max_pool2d(ctx: NodeContext):
    if ctx.rank("self") != 4:
        raise ctx.unsupported(f"a {ctx.rank('self')}-D input", "4-D NCHW inputs")
    kernel, stride, pads = _pool_params(ctx)
    dilation = _pair(ctx.arg("dilation", 1), "dilation", ctx)
    ceil_mode = bool(ctx.arg("ceil_mode"))
    out = ctx.out1(
        graph.MaxPool2dOp(ctx.value("self"), kernel, strides=stride, pads=pads, dilations=dilation, ceil_mode=ceil_mode)
    )
    return (out, None) if isinstance(ctx.out, list | tuple) else out


@converter("avg_pool2d.default")
def convert_avg_pool2d(ctx: NodeContext):
    if ctx.rank("self") != 4:
        raise ctx.unsupported(f"a {ctx.rank('self')}-D input", "4-D NCHW inputs")
    if ctx.arg("divisor_override") is not None:
        raise ctx.unsupported(f"divisor_override={ctx.arg('divisor_override')}", "None")
    kernel, stride, pads = _pool_params(ctx)
    return ctx.out1(
        graph.AvgPool2dOp(
            ctx.value("self"),
            kernel,
            strides=stride,
            pads=pads,
            ceil_mode=bool(ctx.arg("ceil_mode")),
            count_include_pad=bool(ctx.arg("count_include_pad", True)),
        )
    )


@converter("_adaptive_avg_pool2d.default", "adaptive_avg_pool2d.default")
def convert_adaptive_avg_pool2d(ctx: NodeContext):
    shape = ctx.shape("self")
    if len(shape) != 4:
        raise ctx.unsupported(f"a {len(shape)}-D input", "4-D NCHW inputs")
    (h, w), (oh, ow) = shape[2:], ctx.out_shape[2:]
    x = ctx.value("self")
    if (oh, ow) == (1, 1):
        return ctx.out1(graph.GlobalAvgPoolOp(x))
    if (oh, ow) == (h, w):
        return x
    if h % oh == 0 and w % ow == 0:
        kernel = (h // oh, w // ow)
        return ctx.out1(graph.AvgPool2dOp(x, kernel, strides=kernel))
    raise ctx.unsupported(
        f"adaptive average pooling from {h}x{w} to {oh}x{ow} (uneven windows)",
        "output 1x1, or output sizes that divide the input sizes",
    )


def _reduce_axes(ctx: NodeContext, name: str = "dim") -> list[int]:
    rank = ctx.rank("self")
    dims = ctx.arg(name)
    if dims is None or (isinstance(dims, list | tuple) and len(dims) == 0):
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else dims
    return sorted({normalized_axis(d, rank) for d in dims})


def _reduce(ctx: NodeContext, op_class, axes: list[int], keepdim: bool, dtype: np.dtype):
    x = ctx.value("self", dtype)
    if not axes:  # a 0-d tensor
        return x
    return ctx.out1(op_class(x, axes, keepdims=keepdim))


@converter("mean.dim", "mean.default")
def convert_mean(ctx: NodeContext):
    axes = _reduce_axes(ctx)
    keepdim = bool(ctx.arg("keepdim", False))
    if ctx.rank("self") == 4 and axes == [2, 3] and keepdim and ctx.out_dtype.kind == "f":
        return ctx.out1(graph.GlobalAvgPoolOp(ctx.value("self", ctx.out_dtype)))
    return _reduce(ctx, graph.ReduceMeanOp, axes, keepdim, ctx.out_dtype)


@converter("sum.dim_IntList", "sum.default")
def convert_sum(ctx: NodeContext):
    return _reduce(ctx, graph.ReduceSumOp, _reduce_axes(ctx), bool(ctx.arg("keepdim", False)), ctx.out_dtype)


@converter("amax.default")
def convert_amax(ctx: NodeContext):
    return _reduce(ctx, graph.ReduceMaxOp, _reduce_axes(ctx), bool(ctx.arg("keepdim", False)), ctx.out_dtype)


@converter("max.dim")
def convert_max_dim(ctx: NodeContext):
    out = _reduce(ctx, graph.ReduceMaxOp, _reduce_axes(ctx), bool(ctx.arg("keepdim", False)), ctx.dtype("self"))
    return (out, None)


@converter("any.dim", "any.dims", "any.default")
def convert_any(ctx: NodeContext):
    return _reduce(ctx, graph.ReduceMaxOp, _reduce_axes(ctx), bool(ctx.arg("keepdim", False)), np.dtype(np.bool_))


@converter("var.correction", "var.dim")
def convert_var(ctx: NodeContext):
    axes = _reduce_axes(ctx)
    keepdim = bool(ctx.arg("keepdim", False))
    x = ctx.value("self", ctx.out_dtype)
    if "correction" in ctx.args:
        correction = ctx.arg("correction", 1)
    else:
        correction = 1 if ctx.arg("unbiased", True) else 0
    shape = ctx.shape("self")
    count = math.prod(shape[a] for a in axes)
    mean = ctx.out1(graph.ReduceMeanOp(x, axes, keepdims=True))
    centered = ctx.out1(graph.SubOp(x, mean))
    total = ctx.out1(graph.ReduceSumOp(ctx.out1(graph.MulOp(centered, centered)), axes, keepdims=keepdim))
    return ctx.out1(graph.DivOp(total, ctx.scalar(max(count - correction, 0), ctx.out_dtype)))


@converter("_softmax.default", "softmax.int")
def convert_softmax(ctx: NodeContext):
    axis = normalized_axis(ctx.arg("dim"), max(ctx.rank("self"), 1))
    x = ctx.value("self", ctx.out_dtype)
    if not x.type.get_shape():
        return ctx.out1(graph.ReshapeOp(ctx.out1(graph.SoftmaxOp(ctx.out1(graph.ReshapeOp(x, [1])), 0)), []))
    return ctx.out1(graph.SoftmaxOp(x, axis))


# ----------------------------------------------------------------------- resizing


def _resize_scales(ctx: NodeContext) -> list[float]:
    shape, out = ctx.shape("input"), ctx.out_shape
    factors = ctx.arg("scale_factors")
    spatial = [float(f) for f in factors] if factors else [o / i for i, o in zip(shape[2:], out[2:], strict=True)]
    return [1.0, 1.0, *spatial]


@converter("upsample_nearest2d.vec", "upsample_nearest1d.vec")
def convert_upsample_nearest(ctx: NodeContext):
    return ctx.out1(
        graph.ResizeOp(
            ctx.value("input"),
            _resize_scales(ctx),
            mode="nearest",
            coordinate_transformation_mode="asymmetric",
            nearest_mode="floor",
            sizes=ctx.out_shape,
        )
    )


@converter("upsample_bilinear2d.vec", "upsample_linear1d.vec")
def convert_upsample_linear(ctx: NodeContext):
    align = bool(ctx.arg("align_corners"))
    return ctx.out1(
        graph.ResizeOp(
            ctx.value("input"),
            _resize_scales(ctx),
            mode="linear",
            coordinate_transformation_mode="align_corners" if align else "pytorch_half_pixel",
            sizes=ctx.out_shape,
        )
    )
