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

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from boltir.dialects import graph
from boltir.passes import statistics
from boltir.passes.common import (
    NoteOnce,
    batch_norm_affine,
    constant_f64,
    erase_unused_producers,
    filter_in_conv_order,
    filter_in_onnx_order,
    has_nchw_layout,
    name_base,
    new_constant,
    where,
)

# ----------------------------------------------------------------------------- helpers


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
        weight, bias = constant_f64(conv.weight), constant_f64(conv.bias)
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
        new_weight = new_constant(f"{base}.folded_weight", folded_weight, conv.location, element_type)
        new_bias = new_constant(f"{base}.folded_bias", folded_bias, conv.location, element_type)
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
        matrix, addend = constant_f64(b), constant_f64(c)
        if matrix is None or (c is not None and addend is None):
            self.note(bn, f"{where(bn)} not folded into {where(producer)}: its B or C is not a constant")
            return
        s, t = affine
        folded_matrix = matrix * (s[:, None] if trans_b else s[None, :])
        folded_addend = t if addend is None else s * (beta * addend) + t  # broadcasts to M x N
        element_type = producer.output.type.element_type
        base = name_base(b, "gemm")
        new_matrix = new_constant(f"{base}.folded_weight", folded_matrix, producer.location, element_type)
        new_addend = new_constant(f"{base}.folded_bias", folded_addend, producer.location, element_type)
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
        scale = new_constant(f"{base}.scale", s.reshape(channel_shape), bn.location, element_type)
        shift = new_constant(f"{base}.shift", t.reshape(channel_shape), bn.location, element_type)
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
