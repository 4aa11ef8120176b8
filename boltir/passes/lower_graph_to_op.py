"""lower-graph-to-op: every `graph` op becomes its operator-level form in the `op` dialect.

Requires: a verified graph module (any layouts the graph ops carry are kept as they are).
Guarantees: no graph op is left; GEMMs and convs carry their bias in the epilogue
(`#op.epilogue<bias>`), every other epilogue is still a separate `op.unary`/`op.binary`
(fusing them is fuse-epilogue's job); a pool with a 1×1 window, stride 1 and no padding
is dropped (its input is its result); locations and value names are kept; the module
computes the same function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from boltir.diagnostics import BoltError, format_location
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.dtypes import numpy_dtype
from boltir.passes import statistics
from boltir.passes.common import batch_norm_affine
from boltir.weights import make_weight_attr

GRAPH_TO_FILTER_LAYOUT = {"OIHW": "OIHW", "OHWI": "OHWI"}
GRAPH_TO_TRANSPOSED_FILTER_LAYOUT = {"OIHW": "IOHW", "IOHW": "IOHW", "OHWI": "IHWO", "IHWO": "IHWO"}

UNARY_FUNCTIONS: dict[type, Callable[[graph.GraphOp], tuple[str, tuple[float, ...]]]] = {
    graph.ReluOp: lambda op: ("relu", ()),
    graph.LeakyReluOp: lambda op: ("leaky_relu", (op.prop_value("alpha"),)),
    graph.GeluOp: lambda op: ("gelu" if op.prop_value("approximate") == "none" else "gelu_tanh", ()),
    graph.SigmoidOp: lambda op: ("sigmoid", ()),
    graph.TanhOp: lambda op: ("tanh", ()),
    graph.SiluOp: lambda op: ("silu", ()),
    graph.HardSwishOp: lambda op: ("hardswish", ()),
    graph.HardSigmoidOp: lambda op: ("hardsigmoid", (op.prop_value("alpha"), op.prop_value("beta"))),
    graph.ClipOp: lambda op: (
        "clip",
        (
            op.properties["min"].value.data if "min" in op.properties else -ops.UNBOUNDED,
            op.properties["max"].value.data if "max" in op.properties else ops.UNBOUNDED,
        ),
    ),
    graph.ErfOp: lambda op: ("erf", ()),
    graph.SqrtOp: lambda op: ("sqrt", ()),
    graph.ExpOp: lambda op: ("exp", ()),
    graph.NegOp: lambda op: ("neg", ()),
    graph.ReciprocalOp: lambda op: ("reciprocal", ()),
    graph.NotOp: lambda op: ("not", ()),
}

BINARY_FUNCTIONS = {
    graph.AddOp: "add",
    graph.SubOp: "sub",
    graph.MulOp: "mul",
    graph.DivOp: "div",
    graph.PowOp: "pow",
    graph.EqualOp: "equal",
    graph.GreaterOp: "greater",
    graph.GreaterOrEqualOp: "greater_equal",
    graph.LessOp: "less",
    graph.LessOrEqualOp: "less_equal",
    graph.AndOp: "and",
    graph.OrOp: "or",
    graph.XorOp: "xor",
}

REDUCE_KINDS = {graph.ReduceMeanOp: "mean", graph.ReduceSumOp: "sum", graph.ReduceMaxOp: "max"}
SHAPE_ONLY = (graph.ReshapeOp, graph.FlattenOp, graph.SqueezeOp, graph.UnsqueezeOp)


class Lowering:
    """Builds the op-level ops for one graph op, in order, before it."""

    def __init__(self, source: Operation):
        self.source = source
        self.new_ops: list[Operation] = []

    def add(self, op: Operation) -> Operation:
        op.location = self.source.location
        self.new_ops.append(op)
        return op

    def value(self, op: Operation) -> SSAValue:
        return self.add(op).results[0]

    def constant(self, name_hint: str, array: np.ndarray) -> SSAValue:
        return self.value(ops.ConstantOp(make_weight_attr(name_hint, array)))


def identity_body(element_type) -> Region:
    block = Block(arg_types=[element_type])
    block.add_op(ops.YieldOp(block.args[0]))
    return Region(block)


# ------------------------------------------------------------------- per-op lowering


def lower_conv(low: Lowering, op: graph.Conv2dOp | graph.ConvTranspose2dOp) -> list[SSAValue]:
    layout = op.properties["layout"].data if "layout" in op.properties else "NCHW"
    filter_layout = op.properties["filter_layout"].data if "filter_layout" in op.properties else "OIHW"
    common = {
        "bias": op.bias,
        "layout": layout,
        "strides": op.prop_value("strides"),
        "pads": op.prop_value("pads"),
        "dilations": op.prop_value("dilations"),
        "groups": op.prop_value("group"),
    }
    if isinstance(op, graph.Conv2dOp):
        new = ops.Conv2dOp(op.input, op.weight, filter_layout=GRAPH_TO_FILTER_LAYOUT[filter_layout], **common)
    else:
        new = ops.ConvTranspose2dOp(
            op.input,
            op.weight,
            filter_layout=GRAPH_TO_TRANSPOSED_FILTER_LAYOUT[filter_layout],
            output_padding=op.prop_value("output_padding"),
            **common,
        )
    return [low.value(new)]


def lower_matmul(low: Lowering, op: graph.MatMulOp) -> list[SSAValue]:
    a, b = op.lhs, op.rhs
    a_shape, b_shape = tensor_shape(a.type), tensor_shape(b.type)
    if len(a_shape) == 1:
        a = low.value(ops.ReshapeOp(a, (1, *a_shape)))
    if len(b_shape) == 1:
        b = low.value(ops.ReshapeOp(b, (*b_shape, 1)))
    product = low.value(ops.GemmOp(a, b))
    if product.type != op.output.type:
        product = low.value(ops.ReshapeOp(product, tensor_shape(op.output.type)))
    return [product]


def lower_gemm(low: Lowering, op: graph.GemmOp) -> list[SSAValue]:
    """Bias goes into the epilogue when C is per-column ([N] or [1, N]); any other C is
    added after the GEMM, scaled by beta."""
    alpha, beta = op.prop_value("alpha"), op.prop_value("beta")
    layout_a = "col" if op.prop_value("trans_a") else "row"
    layout_b = "col" if op.prop_value("trans_b") else "row"
    m, n = tensor_shape(op.output.type)
    bias = None
    late_c = None
    if op.c is not None:
        c_shape = tensor_shape(op.c.type)
        if c_shape in ((n,), (1, n)):
            bias = op.c if c_shape == (n,) else low.value(ops.ReshapeOp(op.c, (n,)))
        else:
            late_c = op.c
    epilogue = ops.EpilogueAttr.make(alpha=alpha, beta=beta if bias is not None else 1.0, bias=bias is not None)
    product = low.value(ops.GemmOp(op.a, op.b, bias=bias, layout_a=layout_a, layout_b=layout_b, epilogue=epilogue))
    if late_c is not None:
        if beta != 1.0:
            scale = low.constant("gemm_beta", np.array(beta, dtype=numpy_dtype(late_c.type.element_type)))
            late_c = low.value(ops.BinaryOp("mul", late_c, scale))
        product = low.value(ops.BinaryOp("add", product, late_c))
    return [product]


def lower_batch_norm(low: Lowering, op: graph.BatchNormOp) -> list[SSAValue]:
    """A BatchNorm left at this point is a per-channel scale and shift."""
    rank = op.input.type.get_num_dims()
    channel_shape = (-1,) + (1,) * (rank - 2)
    dtype = numpy_dtype(op.input.type.element_type)
    affine = batch_norm_affine(op)  # its statistics are op.constants by now, if constants
    epsilon = op.prop_value("epsilon")
    if affine is not None:
        scale, shift = affine
        scale_value = low.constant("bn_scale", scale.astype(dtype).reshape(channel_shape))
        shift_value = low.constant("bn_shift", shift.astype(dtype).reshape(channel_shape))
    else:
        def channels(value: SSAValue) -> SSAValue:
            return low.value(ops.ReshapeOp(value, tuple(tensor_shape(value.type)) + (1,) * (rank - 2)))

        eps = low.constant("bn_epsilon", np.array(epsilon, dtype=dtype))
        inv_std = low.value(ops.UnaryOp("reciprocal", low.value(ops.UnaryOp("sqrt", low.value(ops.BinaryOp("add", op.variance, eps))))))
        scale_1d = low.value(ops.BinaryOp("mul", op.scale, inv_std))
        shift_1d = low.value(ops.BinaryOp("sub", op.bias, low.value(ops.BinaryOp("mul", op.mean, scale_1d))))
        scale_value, shift_value = channels(scale_1d), channels(shift_1d)
    scaled = low.value(ops.BinaryOp("mul", op.input, scale_value))
    return [low.value(ops.BinaryOp("add", scaled, shift_value))]


def is_identity_pool(op) -> bool:
    """A max or average pool whose 1×1 window, stride 1 and no padding copy its input (the
    adaptive average pool torchvision's VGG exports at 224²): it lowers to nothing."""
    if isinstance(op, graph.GlobalAvgPoolOp):
        return False
    window, strides, pads = op.prop_value("kernel_shape"), op.prop_value("strides"), op.prop_value("pads")
    return all(k == 1 for k in window) and all(s == 1 for s in strides) and not any(pads)


def lower_pool(low: Lowering, op) -> list[SSAValue]:
    layout = op.properties["layout"].data if "layout" in op.properties else "NCHW"
    if isinstance(op, graph.GlobalAvgPoolOp):
        if op.input.type.get_num_dims() == 4:
            return [low.value(ops.Pool2dOp(op.input, "global_avg", layout=layout))]
        rank = op.input.type.get_num_dims()
        spatial = range(1, rank - 1) if layout == "NHWC" else range(2, rank)  # channels last or second
        return [low.value(ops.ReduceOp(op.input, "mean", list(spatial), keepdims=True))]
    if is_identity_pool(op):
        return [op.input]
    kind = "max" if isinstance(op, graph.MaxPool2dOp) else "avg"
    new = ops.Pool2dOp(
        op.input,
        kind,
        layout=layout,
        kernel_shape=op.prop_value("kernel_shape"),
        strides=op.prop_value("strides"),
        pads=op.prop_value("pads"),
        dilations=op.prop_value("dilations") if kind == "max" else (1, 1),
        ceil_mode=op.prop_value("ceil_mode"),
        count_include_pad=kind == "avg" and op.prop_value("count_include_pad"),
    )
    return [low.value(new)]


def lower_split(low: Lowering, op: graph.SplitOp) -> list[SSAValue]:
    axis = op.prop_value("axis")
    start = 0
    pieces = []
    for size in op.prop_value("sizes"):
        pieces.append(low.value(ops.SliceOp(op.input, [start], [start + size], [axis], [1])))
        start += size
    return pieces


def lower_resize(low: Lowering, op: graph.ResizeOp) -> list[SSAValue]:
    new = ops.ResizeOp.build(operands=[op.input], properties=dict(op.properties), result_types=[op.output.type])
    return [low.value(new)]


def lower_sum(low: Lowering, op: graph.SumOp) -> list[SSAValue]:
    total = op.inputs[0]
    for value in op.inputs[1:]:
        total = low.value(ops.BinaryOp("add", total, value))
    if total.type != op.output.type:  # a single operand, or broadcasting to a larger shape
        total = low.value(ops.ElementwiseOp([total], identity_body(total.type.element_type), op.output.type))
    return [total]



# ------------------------------------------------------------------------- attention

HEADS_TO_SEQUENCE = (0, 2, 1, 3)
"""[B, S, H, D] <-> [B, H, S, D]: its own inverse."""


def heads_first_source(value: SSAValue) -> SSAValue | None:
    """x when `value` is x [B, S, H, D] transposed to [B, H, S, D] (lowered already)."""
    op = value.owner
    if isinstance(op, ops.LayoutTransformOp) and tuple(op.prop_value("perm")) == HEADS_TO_SEQUENCE:
        return op.input
    return None


def additive_mask(low: Lowering, mask: SSAValue | None, element_type) -> SSAValue | None:
    """The attention's bias: an additive mask as it is, a boolean one as 0 / -inf."""
    if mask is None or ops.is_float(mask.type.element_type):
        return mask
    dtype = numpy_dtype(element_type)
    zero = low.constant("attention.attend", np.zeros((), dtype=dtype))
    masked = low.constant("attention.masked", np.array(-np.inf, dtype=dtype))
    return low.value(ops.SelectOp(mask, zero, masked))


def lower_attention(low: Lowering, op: graph.AttentionOp) -> list[SSAValue]:
    """"BSHD" when q, k and v are all [B, S, H, D] tensors transposed to heads-first (the
    transposes are left unused), with a transpose back to [B, H, S, D] that the user's
    own transpose to [B, S, H, D] cancels; else "BHSD"."""
    bias = additive_mask(low, op.mask, op.q.type.element_type)
    sources = [heads_first_source(value) for value in (op.q, op.k, op.v)]
    common = {"bias": bias, "scale": op.prop_value("scale"), "causal": op.prop_value("causal")}
    if any(source is None for source in sources):
        return [low.value(ops.AttentionOp(op.q, op.k, op.v, layout="BHSD", **common))]
    attention = low.value(ops.AttentionOp(*sources, layout="BSHD", **common))
    return [low.value(ops.LayoutTransformOp(attention, HEADS_TO_SEQUENCE))]


def cancelled_transpose(op: graph.TransposeOp) -> SSAValue | None:
    """x when `op` transposes `op.layout_transform(x)` back to x."""
    producer = op.input.owner
    if not isinstance(producer, ops.LayoutTransformOp):
        return None
    inner, outer = producer.prop_value("perm"), op.prop_value("perm")
    return producer.input if tuple(inner[p] for p in outer) == tuple(range(len(outer))) else None


def lower(low: Lowering, op: Operation) -> list[SSAValue]:
    """The op-level values that replace `op`'s results."""
    if isinstance(op, graph.ConstantOp):
        return [low.value(ops.ConstantOp(op.value))]
    if type(op) in UNARY_FUNCTIONS:
        fn, args = UNARY_FUNCTIONS[type(op)](op)
        return [low.value(ops.UnaryOp(fn, op.input, args))]
    if type(op) in BINARY_FUNCTIONS:
        return [low.value(ops.BinaryOp(BINARY_FUNCTIONS[type(op)], op.lhs, op.rhs))]
    if isinstance(op, graph.CastOp):
        cast = ops.CastOp(op.input, op.output.type.element_type, saturate=bool(op.prop_value("saturate")), round_mode=op.prop_value("round_mode"))
        return [low.value(cast)]
    if isinstance(op, graph.WhereOp):
        return [low.value(ops.SelectOp(op.condition, op.true_value, op.false_value))]
    if isinstance(op, graph.SumOp):
        return lower_sum(low, op)
    if isinstance(op, graph.Conv2dOp | graph.ConvTranspose2dOp):
        return lower_conv(low, op)
    if isinstance(op, graph.MatMulOp):
        return lower_matmul(low, op)
    if isinstance(op, graph.GemmOp):
        return lower_gemm(low, op)
    if isinstance(op, graph.BatchNormOp):
        return lower_batch_norm(low, op)
    if isinstance(op, graph.MaxPool2dOp | graph.AvgPool2dOp | graph.GlobalAvgPoolOp):
        return lower_pool(low, op)
    if isinstance(op, graph.SoftmaxOp):
        return [low.value(ops.SoftmaxOp(op.input, op.prop_value("axis")))]
    if isinstance(op, graph.LayerNormOp):
        return [low.value(ops.LayerNormOp(op.input, op.scale, op.bias, axis=op.prop_value("axis"), epsilon=op.prop_value("epsilon")))]
    if type(op) in REDUCE_KINDS:
        return [low.value(ops.ReduceOp(op.input, REDUCE_KINDS[type(op)], op.prop_value("axes"), op.prop_value("keepdims")))]
    if isinstance(op, graph.CumSumOp):
        flags = {"exclusive": op.prop_value("exclusive"), "reverse": op.prop_value("reverse")}
        return [low.value(ops.CumSumOp(op.input, op.prop_value("axis"), **flags))]
    if isinstance(op, SHAPE_ONLY):
        return [low.value(ops.ReshapeOp(op.input, tensor_shape(op.output.type)))]
    if isinstance(op, graph.ExpandOp):
        return [low.value(ops.ElementwiseOp([op.input], identity_body(op.input.type.element_type), op.output.type))]
    if isinstance(op, graph.TransposeOp):
        if (source := cancelled_transpose(op)) is not None:
            return [source]
        return [low.value(ops.LayoutTransformOp(op.input, op.prop_value("perm")))]
    if isinstance(op, graph.ConcatOp):
        return [low.value(ops.ConcatOp(list(op.inputs), op.prop_value("axis")))]
    if isinstance(op, graph.SplitOp):
        return lower_split(low, op)
    if isinstance(op, graph.SliceOp):
        slice_op = ops.SliceOp(op.input, op.prop_value("starts"), op.prop_value("ends"), op.prop_value("axes"), op.prop_value("steps"))
        return [low.value(slice_op)]
    if isinstance(op, graph.PadOp):
        return [low.value(ops.PadOp(op.input, op.prop_value("pads"), op.prop_value("mode"), op.prop_value("value")))]
    if isinstance(op, graph.ResizeOp):
        return lower_resize(low, op)
    if isinstance(op, graph.GatherOp):
        return [low.value(ops.GatherOp(op.data, op.indices, op.prop_value("axis")))]
    if isinstance(op, graph.AttentionOp):
        return lower_attention(low, op)
    if isinstance(op, graph.SpaceToDepthOp):  # NCHW in and out, as ONNX's
        blocked = ops.SpaceToDepthOp(op.input, op.prop_value("blocksize"), layout="NCHW", result_layout="NCHW")
        return [low.value(blocked)]
    raise BoltError(f"lower-graph-to-op has no lowering for {op.name}", format_location(op.location))


class LowerGraphOps(RewritePattern):
    def __init__(self, pass_: ModulePass):
        self.pass_ = pass_

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.GraphOp):
            return
        low = Lowering(op)
        results = lower(low, op)
        for old, new in zip(op.results, results, strict=True):
            if new.type != old.type:
                raise BoltError(
                    f"lower-graph-to-op made {new.type} for {old.type} ({op.name})", format_location(op.location)
                )
        producers = {value.owner for value in op.operands}
        rewriter.replace(op, low.new_ops, results)
        statistics.count(self.pass_, f"{op.name} lowered")
        for producer in producers:  # a transpose that attention or a cancelled pair left unused
            if isinstance(producer, ops.LayoutTransformOp) and not producer.output.uses:
                rewriter.erase(producer)


@dataclass(frozen=True)
class LowerGraphToOpPass(ModulePass):
    """Requires: a verified graph-level module. Guarantees: only `op` ops (and func)
    remain, computing the same function; GEMM/conv biases sit in their epilogues."""

    name = "lower-graph-to-op"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(LowerGraphOps(self), apply_recursively=False).rewrite_module(op)

