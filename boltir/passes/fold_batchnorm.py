"""fold-batchnorm: inference batch norms folded into the conv or gemm before them.

An inference BN is a per-channel affine map, `y = s * x + t` with
`s = scale / sqrt(variance + epsilon)` and `t = bias - mean * s`. After a conv it scales
the conv's output channels, so it folds into the conv's weight and bias; after a gemm
(or a 2-D matmul) its channels are the gemm's columns, so it folds into B and C. A BN
that nothing foldable precedes becomes `graph.mul` by s then `graph.add` of t, which
fuse-epilogue and reparameterize-branches understand. The folded weights are computed in
f64 and rounded once to the weight's element type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from boltir.dialects import graph
from boltir.dtypes import numpy_dtype
from boltir.passes import statistics
from boltir.passes.fold_constants import NoteOnce, where
from boltir.weights import constant_array, make_weight_attr

# ----------------------------------------------------------------------------- helpers


def constant_value(value: SSAValue | None) -> np.ndarray | None:
    """The value of a `graph.constant` result as f64, or None for anything else."""
    if value is None or not isinstance(value.owner, graph.ConstantOp):
        return None
    return constant_array(value.owner.value).astype(np.float64)


def batch_norm_affine(bn: graph.BatchNormOp) -> tuple[np.ndarray, np.ndarray] | None:
    """(s, t) with `bn(x) = s * x + t` per channel, in f64; None unless the statistics
    are constants."""
    scale, bias, mean, variance = (constant_value(v) for v in (bn.scale, bn.bias, bn.mean, bn.variance))
    if scale is None or bias is None or mean is None or variance is None:
        return None
    # epsilon is added in f32, as the interpreter does.
    s = scale / np.sqrt(variance + float(np.float32(bn.prop_value("epsilon"))))
    return s, bias - mean * s


def constant_name(value: SSAValue) -> str | None:
    """The weight name of a constant (its resource handle), else its SSA name."""
    producer = value.owner
    if isinstance(producer, graph.ConstantOp) and isinstance(producer.value, DenseResourceAttr):
        return producer.value.resource_handle.data
    return value.name_hint


def make_constant(name_hint: str, array: np.ndarray, element_type: Attribute, location) -> graph.ConstantOp:
    constant = graph.ConstantOp(make_weight_attr(name_hint, array.astype(numpy_dtype(element_type))))
    constant.location = location
    return constant


WEIGHT_SUFFIXES = (".weight", ".folded_weight", ".merged_weight")


def name_base(value: SSAValue | None, fallback: str) -> str:
    """`conv1` for a weight named `conv1.weight` (or `conv1.folded_weight`, which this
    pass names it): the prefix new weights are named by."""
    name = (constant_name(value) if value is not None else None) or fallback
    for suffix in WEIGHT_SUFFIXES:
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def has_nchw_layout(op: graph.ConvBase) -> bool:
    """Whether a conv's input and output are NCHW, the BN's channel axis being theirs."""
    return op.prop_value("layout") == "NCHW"


CHANNELS_FIRST = (0, 3, 1, 2)
"""OHWI -> OIHW and IHWO -> IOHW (the inverse of CHANNELS_LAST)."""
CHANNELS_LAST = (0, 2, 3, 1)


def filter_in_onnx_order(conv: graph.ConvBase, weight: np.ndarray) -> np.ndarray:
    """A conv's weight in ONNX's order (OIHW, or IOHW for conv_transpose2d)."""
    if conv.prop_value("filter_layout") == graph.FILTER_LAYOUTS[conv.name][1]:
        return weight.transpose(CHANNELS_FIRST)
    return weight


def filter_in_conv_order(conv: graph.ConvBase, weight: np.ndarray) -> np.ndarray:
    """The inverse of `filter_in_onnx_order`."""
    if conv.prop_value("filter_layout") == graph.FILTER_LAYOUTS[conv.name][1]:
        return weight.transpose(CHANNELS_LAST)
    return weight


def erase_unused_producers(rewriter: PatternRewriter, values: list[SSAValue | None]) -> None:
    """Erases the constants that fed a folded op and feed nothing else now."""
    for value in values:
        if value is not None and isinstance(value.owner, graph.ConstantOp) and not value.uses:
            rewriter.erase(value.owner)


def foldable_producer(bn: graph.BatchNormOp, note: NoteOnce, kinds: tuple[type, ...]) -> Operation | None:
    """The op of `kinds` that produces the BN's input, if the BN is its only user."""
    producer = bn.input.owner
    if not isinstance(producer, kinds):
        return None
    if not producer.output.has_one_use():
        note(bn, f"{where(bn)} not folded into {where(producer)}: its result has other users")
        return None
    return producer


# ---------------------------------------------------------------------------- patterns


@dataclass
class FoldBatchNormIntoConv(RewritePattern):
    """bn(conv(x, W, b)) -> conv(x, W * s, b * s + t), for conv2d and conv_transpose2d."""

    owner: ModulePass
    note: NoteOnce

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
        conv = foldable_producer(bn, self.note, (graph.Conv2dOp, graph.ConvTranspose2dOp))
        affine = batch_norm_affine(bn)
        if conv is None or affine is None:
            return
        if not has_nchw_layout(conv):
            self.note(bn, f"{where(bn)} not folded into {where(conv)}: its layout is not NCHW")
            return
        weight, bias = constant_value(conv.weight), constant_value(conv.bias)
        if weight is None or (conv.bias is not None and bias is None):
            self.note(bn, f"{where(bn)} not folded into {where(conv)}: its weight or bias is not a constant")
            return
        s, t = affine
        weight = filter_in_onnx_order(conv, weight)
        if isinstance(conv, graph.Conv2dOp):  # weight M x C/group x kH x kW
            folded_weight = weight * s.reshape(-1, 1, 1, 1)
        else:  # weight C x M/group x kH x kW: output channel g * M/group + j is [g-th block, j]
            group = conv.prop_value("group")
            channels, per_group, kh, kw = weight.shape
            blocks = weight.reshape(group, channels // group, per_group, kh, kw)
            folded_weight = (blocks * s.reshape(group, 1, per_group, 1, 1)).reshape(weight.shape)
        folded_weight = filter_in_conv_order(conv, folded_weight)
        folded_bias = (bias if bias is not None else 0.0) * s + t
        element_type = conv.output.type.element_type
        base = name_base(conv.weight, "conv")
        new_weight = make_constant(f"{base}.folded_weight", folded_weight, element_type, conv.location)
        new_bias = make_constant(f"{base}.folded_bias", folded_bias, element_type, conv.location)
        folded = type(conv).create(
            operands=[conv.input, new_weight.output, new_bias.output],
            result_types=[bn.output.type],
            properties=dict(conv.properties),  # strides, pads, group, layouts... as they were
            attributes=dict(conv.attributes),
            location=conv.location,
        )
        old_inputs = [conv.weight, conv.bias, bn.scale, bn.bias, bn.mean, bn.variance]
        rewriter.replace(bn, [new_weight, new_bias, folded], [folded.output])
        rewriter.erase(conv)
        erase_unused_producers(rewriter, old_inputs)
        statistics.count(self.owner, "batchnorms folded into conv")


@dataclass
class FoldBatchNormIntoGemm(RewritePattern):
    """bn(gemm(A, B, C)) -> gemm(A, B * s, s * beta * C + t): the BN's channels (axis 1)
    are the gemm's columns. A 2-D matmul becomes such a gemm."""

    owner: ModulePass
    note: NoteOnce

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
        producer = foldable_producer(bn, self.note, (graph.GemmOp, graph.MatMulOp))
        affine = batch_norm_affine(bn)
        if producer is None or affine is None:
            return
        if isinstance(producer, graph.MatMulOp):
            a, b, c = producer.lhs, producer.rhs, None
            # Batched matmuls normalize a batch or row axis: nothing to fold into.
            if a.type.get_num_dims() != 2 or b.type.get_num_dims() != 2:
                return
            alpha, beta, trans_a, trans_b = 1.0, 1.0, False, False
        else:
            a, b, c = producer.a, producer.b, producer.c
            alpha, beta = producer.prop_value("alpha"), producer.prop_value("beta")
            trans_a, trans_b = producer.prop_value("trans_a"), producer.prop_value("trans_b")
        matrix, addend = constant_value(b), constant_value(c)
        if matrix is None or (c is not None and addend is None):
            self.note(bn, f"{where(bn)} not folded into {where(producer)}: its B or C is not a constant")
            return
        s, t = affine
        folded_matrix = matrix * (s[:, None] if trans_b else s[None, :])
        folded_addend = t if addend is None else s * (beta * addend) + t  # broadcasts to M x N
        element_type = producer.output.type.element_type
        base = name_base(b, "gemm")
        new_matrix = make_constant(f"{base}.folded_weight", folded_matrix, element_type, producer.location)
        new_addend = make_constant(f"{base}.folded_bias", folded_addend, element_type, producer.location)
        folded = graph.GemmOp(a, new_matrix.output, new_addend.output, alpha=alpha, trans_a=trans_a, trans_b=trans_b)
        folded.attributes.update(producer.attributes)
        folded.location = producer.location
        old_inputs = [b, c, bn.scale, bn.bias, bn.mean, bn.variance]
        rewriter.replace(bn, [new_matrix, new_addend, folded], [folded.output])
        rewriter.erase(producer)
        erase_unused_producers(rewriter, old_inputs)
        statistics.count(self.owner, "batchnorms folded into gemm")


@dataclass
class BatchNormToScaleAndShift(RewritePattern):
    """bn(x) -> x * s + t, with s and t of shape [C, 1, ...] (one 1 per spatial axis).
    Tried after the folds, so it takes what they leave."""

    owner: ModulePass
    note: NoteOnce

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
        affine = batch_norm_affine(bn)
        if affine is None:
            self.note(bn, f"left {where(bn)} alone: its statistics are not constants")
            return
        s, t = affine
        channel_shape = (-1,) + (1,) * (bn.input.type.get_num_dims() - 2)
        element_type = bn.output.type.element_type
        base = name_base(bn.scale, "batch_norm")
        scale = make_constant(f"{base}.scale", s.reshape(channel_shape), element_type, bn.location)
        shift = make_constant(f"{base}.shift", t.reshape(channel_shape), element_type, bn.location)
        scaled = graph.MulOp(bn.input, scale.output)
        shifted = graph.AddOp(scaled.output, shift.output)
        scaled.location = shifted.location = bn.location
        old_inputs = [bn.scale, bn.bias, bn.mean, bn.variance]
        rewriter.replace(bn, [scale, shift, scaled, shifted], [shifted.output])
        erase_unused_producers(rewriter, old_inputs)
        statistics.count(self.owner, "batchnorms turned into scale and shift")


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    """Removes every inference `graph.batch_norm` whose statistics are constants.

    Requires: graph-level IR; BN scale, bias, mean and variance as `graph.constant`s
    (run fold-constants first where they are computed).
    Guarantees: a BN after a conv2d / conv_transpose2d (NCHW, constant weight and bias)
    or a gemm / 2-D matmul (constant B and C) that it alone uses is folded into that op,
    which gets a bias if it had none; every other such BN becomes `graph.mul` by a
    per-channel constant of shape [C, 1, ...] then `graph.add` of one. BNs with
    non-constant statistics stay, with a note. The module computes the same function.
    """

    name = "fold-batchnorm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        note = NoteOnce(self)
        patterns = [
            FoldBatchNormIntoConv(self, note),
            FoldBatchNormIntoGemm(self, note),
            BatchNormToScaleAndShift(self, note),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns, dce_enabled=False)).rewrite_module(op)
