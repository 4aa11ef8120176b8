"""Converters of elementwise, shape and data-movement ATen ops: `(NodeContext) ->
result`, one small function per op, registered by overload name (`add.Tensor`).

A converter emits graph ops through `ctx` and returns the result's SSA value (a tuple
for ops with several results, None for a result that boltir does not compute).
Arguments are read by their schema names; `ctx.value(name, dtype)` casts a tensor to
the dtype torch promoted the result to.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from boltir.dialects import graph
from boltir.frontends.registry import registrar
from boltir.frontends.torch_context import (
    SHAPE_ONLY_NAMES,
    Converter,
    NodeContext,
    is_fx_node,
    normalized_axis,
    static_shape,
    torch_to_numpy_dtype,
)

NAMED_CONVERTERS: dict[str, Converter] = {}
"""The converter of each ATen overload, by `packet.overload` name."""

converter = registrar(NAMED_CONVERTERS)


def _identity(ctx: NodeContext, name: str = "self"):
    """An argument unchanged: its SSA value, or its value known at import."""
    return ctx.importer.values[ctx.raw(name).name] if is_fx_node(ctx.raw(name)) else ctx.value(name)


def _float_input(ctx: NodeContext, name: str = "self") -> SSAValue:
    """A tensor argument cast to the result's dtype (torch promotes ints for float ops)."""
    return ctx.value(name, ctx.out_dtype)


# -------------------------------------------------------------------- elementwise

UNARY_OPS = {
    "relu.default": graph.ReluOp,
    "sigmoid.default": graph.SigmoidOp,
    "tanh.default": graph.TanhOp,
    "silu.default": graph.SiluOp,
    "hardswish.default": graph.HardSwishOp,
    "erf.default": graph.ErfOp,
    "sqrt.default": graph.SqrtOp,
    "exp.default": graph.ExpOp,
    "neg.default": graph.NegOp,
    "reciprocal.default": graph.ReciprocalOp,
}


def _overload_name(ctx: NodeContext) -> str:
    return f"{ctx.target._schema.name.split('::')[1]}.{ctx.target._overloadname}"


@converter(*UNARY_OPS)
def convert_unary(ctx: NodeContext):
    op_class = UNARY_OPS[_overload_name(ctx)]
    return ctx.out1(op_class(_float_input(ctx)))


@converter("rsqrt.default")
def convert_rsqrt(ctx: NodeContext):
    return ctx.out1(graph.ReciprocalOp(ctx.out1(graph.SqrtOp(_float_input(ctx)))))


@converter("abs.default")
def convert_abs(ctx: NodeContext):
    x = _float_input(ctx)
    if ctx.out_dtype == np.bool_:
        return x
    positive = ctx.out1(graph.ReluOp(x))
    negative = ctx.out1(graph.ReluOp(ctx.out1(graph.NegOp(x))))
    return ctx.out1(graph.AddOp(positive, negative))


@converter("gelu.default")
def convert_gelu(ctx: NodeContext):
    approximate = ctx.arg("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ctx.unsupported(f"approximate='{approximate}'", "'none', 'tanh'")
    return ctx.out1(graph.GeluOp(_float_input(ctx), approximate))


@converter("hardsigmoid.default")
def convert_hardsigmoid(ctx: NodeContext):
    return ctx.out1(graph.HardSigmoidOp(_float_input(ctx), alpha=1.0 / 6.0, beta=0.5))


@converter("leaky_relu.default")
def convert_leaky_relu(ctx: NodeContext):
    return ctx.out1(graph.LeakyReluOp(_float_input(ctx), float(ctx.arg("negative_slope", 0.01))))


def _clip(ctx: NodeContext, low, high):
    x = _float_input(ctx)
    low = None if low is None else float(low)
    high = None if high is None else float(high)
    if low is not None and high is not None and low > high:
        raise ctx.error(f"min {low} is greater than max {high}")
    return ctx.out1(graph.ClipOp(x, low, high))


@converter("hardtanh.default")
def convert_hardtanh(ctx: NodeContext):
    return _clip(ctx, ctx.arg("min_val", -1.0), ctx.arg("max_val", 1.0))


@converter("clamp.default")
def convert_clamp(ctx: NodeContext):
    return _clip(ctx, ctx.arg("min"), ctx.arg("max"))


@converter("relu6.default")
def convert_relu6(ctx: NodeContext):
    return _clip(ctx, 0.0, 6.0)


@converter("clamp_min.default")
def convert_clamp_min(ctx: NodeContext):
    return _clip(ctx, ctx.arg("min"), None)


@converter("clamp_max.default")
def convert_clamp_max(ctx: NodeContext):
    return _clip(ctx, None, ctx.arg("max"))


SCALED_SUMS = {
    "add": (graph.AddOp, "self", "other"),
    "sub": (graph.SubOp, "self", "other"),
    "rsub": (graph.SubOp, "other", "self"),
}
"""add, sub and rsub: `op(first, alpha * second)`, by the arguments they read as first and second."""


@converter(*(f"{name}.{overload}" for name in SCALED_SUMS for overload in ("Tensor", "Scalar")))
def convert_scaled_sum(ctx: NodeContext):
    op_class, first, second = SCALED_SUMS[_overload_name(ctx).split(".")[0]]
    scaled = ctx.scale(ctx.value(second, ctx.out_dtype), ctx.arg("alpha", 1))
    return ctx.out1(op_class(ctx.value(first, ctx.out_dtype), scaled))


@converter("mul.Tensor", "mul.Scalar")
def convert_mul(ctx: NodeContext):
    return ctx.out1(graph.MulOp(ctx.value("self", ctx.out_dtype), ctx.value("other", ctx.out_dtype)))


@converter("div.Tensor", "div.Scalar", "div.Tensor_mode", "div.Scalar_mode")
def convert_div(ctx: NodeContext):
    mode = ctx.arg("rounding_mode")
    if mode is not None:
        if mode != "trunc" or ctx.out_dtype.kind not in "iu":
            raise ctx.unsupported(
                f"rounding_mode='{mode}' on {ctx.out_dtype}", "true division, and 'trunc' on integer tensors"
            )
    return ctx.out1(graph.DivOp(ctx.value("self", ctx.out_dtype), ctx.value("other", ctx.out_dtype)))


@converter("pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar")
def convert_pow(ctx: NodeContext):
    exponent = ctx.raw("exponent")
    if isinstance(exponent, int | float) and not isinstance(exponent, bool):
        base = ctx.value("self", ctx.out_dtype)
        if exponent == 1:
            return base
        if exponent == 2:
            return ctx.out1(graph.MulOp(base, base))
        if exponent == 0.5 and ctx.out_dtype.kind == "f":
            return ctx.out1(graph.SqrtOp(base))
        if exponent == -1 and ctx.out_dtype.kind == "f":
            return ctx.out1(graph.ReciprocalOp(base))
    if ctx.out_dtype.kind != "f":
        raise ctx.unsupported(f"pow on {ctx.out_dtype}", "floating-point tensors, and integer squares")
    return ctx.out1(graph.PowOp(ctx.value("self", ctx.out_dtype), ctx.value("exponent", ctx.out_dtype)))


def _comparison_dtype(ctx: NodeContext) -> np.dtype:
    torch = ctx.importer.torch
    operands = []
    for name in ("self", "other"):
        raw = ctx.raw(name)
        operands.append(raw.meta["val"] if is_fx_node(raw) else raw)
    return torch_to_numpy_dtype(torch.result_type(*operands), f"the operands of {ctx.describe()}")


COMPARISONS = {"eq": graph.EqualOp, "gt": graph.GreaterOp, "ge": graph.GreaterOrEqualOp, "lt": graph.LessOp, "le": graph.LessOrEqualOp}


@converter(*(f"{name}.{overload}" for name in COMPARISONS for overload in ("Tensor", "Scalar")))
def convert_comparison(ctx: NodeContext):
    dtype = _comparison_dtype(ctx)
    op_class = COMPARISONS[_overload_name(ctx).split(".")[0]]
    return ctx.out1(op_class(ctx.value("self", dtype), ctx.value("other", dtype)))


def _logical_not(ctx: NodeContext, condition: SSAValue) -> SSAValue:
    return ctx.out1(graph.NotOp(condition))


@converter("ne.Tensor", "ne.Scalar")
def convert_ne(ctx: NodeContext):
    dtype = _comparison_dtype(ctx)
    return _logical_not(ctx, ctx.out1(graph.EqualOp(ctx.value("self", dtype), ctx.value("other", dtype))))


@converter("logical_not.default")
def convert_logical_not(ctx: NodeContext):
    condition = ctx.value("self", np.dtype(np.bool_))
    return ctx.cast(_logical_not(ctx, condition), ctx.out_dtype)


LOGICAL = {"and": graph.AndOp, "or": graph.OrOp, "xor": graph.XorOp}


@converter(*(f"logical_{name}.default" for name in LOGICAL), *(f"bitwise_{name}.Tensor" for name in LOGICAL))
def convert_logical(ctx: NodeContext):
    """logical_and/or/xor, and `&`, `|`, `^` on booleans (masks)."""
    boolean = np.dtype(np.bool_)
    kind, _, name = _overload_name(ctx).split(".")[0].partition("_")
    if kind == "bitwise" and ctx.out_dtype != boolean:
        raise ctx.unsupported(f"bitwise_{name} on {ctx.out_dtype}", "boolean tensors")
    value = ctx.out1(LOGICAL[name](ctx.value("self", boolean), ctx.value("other", boolean)))
    return ctx.cast(value, ctx.out_dtype)


@converter("bitwise_not.default")
def convert_bitwise_not(ctx: NodeContext):
    if ctx.out_dtype != np.bool_:
        raise ctx.unsupported(f"bitwise_not on {ctx.out_dtype}", "boolean tensors")
    return _logical_not(ctx, ctx.value("self"))


@converter("where.self")
def convert_where(ctx: NodeContext):
    condition = ctx.value("condition", np.dtype(np.bool_))
    return ctx.out1(graph.WhereOp(condition, ctx.value("self", ctx.out_dtype), ctx.value("other", ctx.out_dtype)))


@converter("_to_copy.default", "to.dtype", "to.dtype_layout", "to.device", "to.other", "_to_dim_order_copy.default")
def convert_to_copy(ctx: NodeContext):
    return ctx.value("self", ctx.out_dtype)


# ------------------------------------------------------------------------- shapes


@converter(
    "clone.default", "alias.default", "detach.default", "lift_fresh_copy.default", "contiguous.default",
    "alias_copy.default", "detach_copy.default", "_conj.default", "resolve_conj.default", "resolve_neg.default",
)  # fmt: skip
def convert_identity(ctx: NodeContext):
    return _identity(ctx)


@converter("dropout.default", "native_dropout.default", "feature_dropout.default")
def convert_dropout(ctx: NodeContext):
    if ctx.arg("train", False):
        raise ctx.error("dropout in training mode; boltir compiles inference only: call module.eval()")
    x = _identity(ctx, "input")
    return (x, None) if isinstance(ctx.out, list | tuple) else x


@converter(
    "view.default", "_unsafe_view.default", "reshape.default", "view_copy.default", "flatten.using_ints",
    "unflatten.int", "_reshape_alias.default",
)  # fmt: skip
def convert_reshape(ctx: NodeContext):
    return ctx.reshape(ctx.value("self"), ctx.out_shape)


def _row_major(shape, strides) -> bool:
    """Whether `strides` walk `shape` in row-major order with no gaps (a size-1 dim's
    stride never matters)."""
    expected = 1
    for size, stride in zip(reversed(tuple(shape)), reversed(tuple(strides))):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


@converter("as_strided.default", "as_strided_copy.default")
def convert_as_strided(ctx: NodeContext):
    """Only as a reshape: a row-major view of all of a row-major tensor from offset 0 (the
    decomposition of adaptive_avg_pool2d to 1x1 restrides its result so)."""
    size, stride, offset = ctx.arg("size"), ctx.arg("stride"), ctx.arg("storage_offset", 0)
    source = ctx.meta("self")
    if offset or math.prod(size) != source.numel() or not _row_major(size, stride) or not _row_major(source.shape,
                                                                                                       source.stride()):
        raise ctx.error(f"as_strided to size {list(size)}, stride {list(stride)}, offset {offset} is supported only "
                        "as a reshape (row-major, of the whole tensor)")
    return ctx.reshape(ctx.value("self"), ctx.out_shape)


def _permuted(ctx: NodeContext, perm: list[int]):
    """The `self` argument with its axes permuted: itself for the identity permutation."""
    if perm == list(range(len(perm))):
        return _identity(ctx)
    return ctx.out1(graph.TransposeOp(ctx.value("self"), perm))


@converter("permute.default", "permute_copy.default")
def convert_permute(ctx: NodeContext):
    rank = ctx.rank("self")
    return _permuted(ctx, [normalized_axis(d, rank) for d in ctx.arg("dims")])


@converter("transpose.int", "transpose_copy.int")
def convert_transpose(ctx: NodeContext):
    rank = ctx.rank("self")
    if rank < 2:
        return _identity(ctx)
    a, b = normalized_axis(ctx.arg("dim0"), rank), normalized_axis(ctx.arg("dim1"), rank)
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return _permuted(ctx, perm)


@converter("t.default", "numpy_T.default")
def convert_t(ctx: NodeContext):
    return _permuted(ctx, list(range(ctx.rank("self")))[::-1])


@converter("expand.default", "expand_copy.default", "broadcast_to.default", "expand_as.default")
def convert_expand(ctx: NodeContext):
    x = ctx.value("self")
    if tuple(x.type.get_shape()) == ctx.out_shape:
        return x
    return ctx.out1(graph.ExpandOp(x, ctx.out_shape))


@converter("unsqueeze.default", "unsqueeze_copy.default")
def convert_unsqueeze(ctx: NodeContext):
    axis = normalized_axis(ctx.arg("dim"), ctx.rank("self") + 1)
    return ctx.out1(graph.UnsqueezeOp(ctx.value("self"), [axis]))


@converter("squeeze.default", "squeeze.dim", "squeeze.dims", "squeeze_copy.default", "squeeze_copy.dim",
           "squeeze_copy.dims")  # fmt: skip
def convert_squeeze(ctx: NodeContext):
    shape = ctx.shape("self")
    dims = ctx.arg("dim")
    if dims is None:
        candidates = range(len(shape))
    else:
        candidates = [normalized_axis(d, len(shape)) for d in ([dims] if isinstance(dims, int) else dims)]
    axes = sorted({a for a in candidates if shape and shape[a] == 1})
    if not axes:
        return _identity(ctx)
    return ctx.out1(graph.SqueezeOp(ctx.value("self"), axes))


def _slice(ctx: NodeContext, x: SSAValue, dim: int, start: int, end: int, step: int = 1) -> SSAValue:
    size = x.type.get_shape()[dim]
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(0, min(size, end + size if end < 0 else end))
    if start == 0 and end == size and step == 1:
        return x
    return ctx.out1(graph.SliceOp(x, [start], [end], [dim], [step]))


@converter("slice.Tensor", "slice_copy.Tensor")
def convert_slice(ctx: NodeContext):
    rank = ctx.rank("self")
    dim = normalized_axis(ctx.arg("dim", 0), rank)
    size = ctx.shape("self")[dim]
    start = ctx.arg("start")
    end = ctx.arg("end")
    step = ctx.arg("step", 1)
    if step < 1:
        raise ctx.unsupported(f"step {step}", "positive steps")
    return _slice(ctx, ctx.value("self"), dim, 0 if start is None else start, size if end is None else end, step)


@converter("narrow.default")
def convert_narrow(ctx: NodeContext):
    dim = normalized_axis(ctx.arg("dim"), ctx.rank("self"))
    start = ctx.arg("start")
    start = start + ctx.shape("self")[dim] if start < 0 else start
    return _slice(ctx, ctx.value("self"), dim, start, start + ctx.arg("length"))


@converter("select.int", "select_copy.int")
def convert_select(ctx: NodeContext):
    rank = ctx.rank("self")
    dim = normalized_axis(ctx.arg("dim"), rank)
    size = ctx.shape("self")[dim]
    index = ctx.arg("index")
    index = index + size if index < 0 else index
    if not 0 <= index < size:
        raise ctx.error(f"index {ctx.arg('index')} is out of range for dimension {dim} of size {size}")
    sliced = ctx.out1(graph.SliceOp(ctx.value("self"), [index], [index + 1], [dim], [1]))
    return ctx.out1(graph.SqueezeOp(sliced, [dim]))


@converter("cat.default", "concat.default")
def convert_cat(ctx: NodeContext):
    raws = ctx.raw("tensors")
    keep = [r for r in raws if not (is_fx_node(r) and tuple(r.meta["val"].shape) == (0,))]
    if not keep:
        raise ctx.error("concatenates only empty tensors")
    values = [ctx.importer.as_value(r, ctx.out_dtype, cast=True, ctx=ctx) for r in keep]
    if len(values) == 1:
        return values[0]
    rank = len(values[0].type.get_shape())
    return ctx.out1(graph.ConcatOp(values, normalized_axis(ctx.arg("dim", 0), rank)))


@converter("split.Tensor", "split_with_sizes.default", "unsafe_split.Tensor", "split_with_sizes_copy.default",
           "split_copy.Tensor", "unsafe_split_with_sizes.default")  # fmt: skip
def convert_split(ctx: NodeContext):
    dim = normalized_axis(ctx.arg("dim", 0), ctx.rank("self"))
    sizes = [static_shape(v, f"a result of {ctx.describe()}")[dim] for v in ctx.out]
    x = ctx.value("self")
    if len(sizes) == 1:
        return [x]
    return list(ctx.emit(graph.SplitOp(x, sizes, dim)).results)


@converter("unbind.int", "unbind_copy.int")
def convert_unbind(ctx: NodeContext):
    dim = normalized_axis(ctx.arg("dim", 0), ctx.rank("self"))
    count = ctx.shape("self")[dim]
    x = ctx.value("self")
    pieces = [x] if count == 1 else list(ctx.emit(graph.SplitOp(x, [1] * count, dim)).results)
    return [ctx.out1(graph.SqueezeOp(p, [dim])) for p in pieces]


def _pads_from_torch(pad: Sequence[int], rank: int, ctx: NodeContext) -> list[int]:
    """torch's pad list (last axis first, begin/end pairs) as ONNX pads."""
    if len(pad) % 2 or len(pad) // 2 > rank:
        raise ctx.error(f"pad {list(pad)} must hold begin/end pairs for at most {rank} axes")
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i] = int(pad[2 * i])
        ends[rank - 1 - i] = int(pad[2 * i + 1])
    return begins + ends


@converter("constant_pad_nd.default")
def convert_constant_pad(ctx: NodeContext):
    pads = _pads_from_torch(ctx.arg("pad"), ctx.rank("self"), ctx)
    if not any(pads):
        return _identity(ctx)
    return ctx.out1(graph.PadOp(ctx.value("self"), pads, "constant", float(ctx.arg("value", 0))))


# -------------------------------------------------------------- values from shapes


@converter(*SHAPE_ONLY_NAMES)
def convert_like(ctx: NodeContext):
    """A constant of the result's shape: full_like and friends read only the shape."""
    torch = ctx.importer.torch
    name = _overload_name(ctx)
    fill = {"zeros_like.default": 0, "empty_like.default": 0, "ones_like.default": 1}.get(name)
    if fill is None:
        fill = ctx.arg("fill_value")
    return torch.full(ctx.out_shape, fill, dtype=ctx.primary.dtype)


# ------------------------------------------------------------------------- attention


@converter("scaled_dot_product_attention.default")
def convert_scaled_dot_product_attention(ctx: NodeContext):
    """torch's SDPA on 4-D [B, H, S, D] tensors, with an optional boolean (true = attend)
    or additive mask, is_causal (top-left) and scale (default 1/sqrt(D)); inference only
    (no dropout), as many K/V heads as Q heads."""
    if any(ctx.rank(name) != 4 for name in ("query", "key", "value")):
        raise ctx.error("only 4-D query, key and value ([batch, heads, sequence, head size]) are supported")
    if ctx.arg("dropout_p", 0.0):
        raise ctx.error(f"dropout_p={ctx.arg('dropout_p')} is not supported: export the model in eval mode")
    if ctx.arg("enable_gqa", False) and ctx.shape("query")[1] != ctx.shape("key")[1]:
        raise ctx.error("grouped-query attention (enable_gqa) is not supported")
    dtype = ctx.out_dtype
    q, k, v = (ctx.value(name, dtype) for name in ("query", "key", "value"))
    mask = None
    if ctx.has("attn_mask"):
        mask_dtype = ctx.dtype("attn_mask")
        mask = ctx.value("attn_mask", mask_dtype if mask_dtype == np.bool_ else dtype)
    scale = ctx.arg("scale")
    scale = 1.0 / ctx.shape("query")[3] ** 0.5 if scale is None else float(scale)
    return ctx.out1(graph.AttentionOp(q, k, v, mask, scale=scale, causal=bool(ctx.arg("is_causal", False))))
