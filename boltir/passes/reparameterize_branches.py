"""reparameterize-branches: parallel conv branches summed together become one 3x3 conv.

RepVGG-style networks train with several branches per block, a 3x3 conv, a 1x1 conv and
an identity (each followed by a BN), and sum them. Convolution is linear, so at
inference the sum is one 3x3 conv: the 1x1 kernel is the 3x3 kernel's center tap, and the
identity branch (`x * s + t` after fold-batchnorm, or plain `x`) is a kernel holding s at
the center of each channel's own input (within its group). The branch biases and shifts
add up. The merged conv reads `x` and writes its result once instead of once per branch,
and runs as one CUTLASS kernel.

A sum is a tree of `graph.add`s: every inner add feeds only its parent. Its summands
that are 3x3 (pad 1) and 1x1 (pad 0) convs of one input `x` with the same stride and
group, scaled copies of `x`, and per-channel constants merge into one conv; any other
summand is added to the merged conv's result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
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
    CHANNELS_FIRST,
    NoteOnce,
    constant_f64,
    erase_unused_producers,
    filter_in_conv_order,
    filter_in_onnx_order,
    has_channels_last_filter,
    has_nchw_layout,
    name_base,
    new_constant,
    where,
)

KERNEL = 3
"""The merged conv's kernel size; 1x1 branches become its center tap."""


# ----------------------------------------------------------------------------- helpers


def summands(root: graph.AddOp) -> tuple[list[SSAValue], list[graph.AddOp]]:
    """The leaves of the add tree under `root` (left to right) and its inner adds (each
    before the adds it feeds on): an add belongs to the tree when it feeds only its
    parent, without broadcasting."""
    leaves: list[SSAValue] = []
    inner: list[graph.AddOp] = []

    def visit(value: SSAValue) -> None:
        producer = value.owner
        if isinstance(producer, graph.AddOp) and value.type == root.output.type and (
            producer is root or value.has_one_use()
        ):
            if producer is not root:
                inner.append(producer)
            visit(producer.lhs)
            visit(producer.rhs)
        else:
            leaves.append(value)

    visit(root.output)
    return leaves, inner


def is_inner_add(add: graph.AddOp) -> bool:
    """Whether `add` belongs to the tree of the add it feeds (which handles it)."""
    user = add.output.get_user_of_unique_use()
    return isinstance(user, graph.AddOp) and user.output.type == add.output.type


def per_channel(value: SSAValue, like: TensorType) -> np.ndarray | None:
    """The constant `value` as one f64 number per channel of `like` (an N x C x H x W
    type), if it broadcasts along the channels only: [C, 1, 1], [1, C, 1, 1], [1]..."""
    array = constant_f64(value)
    if array is None or array.ndim > 4:
        return None
    channels = like.get_shape()[1]
    shape = (1,) * (4 - array.ndim) + array.shape
    if shape[0] != 1 or shape[2:] != (1, 1) or shape[1] not in (1, channels):
        return None
    return np.broadcast_to(array.reshape(-1), (channels,))


def onnx_filter_shape(conv: graph.Conv2dOp) -> tuple[int, ...]:
    """The weight's M x C/group x kH x kW, whatever its filter layout."""
    shape = conv.weight.type.get_shape()
    if has_channels_last_filter(conv):
        return tuple(shape[axis] for axis in CHANNELS_FIRST)
    return shape


def conv_refusal(conv: graph.Conv2dOp) -> str | None:
    """Why this conv cannot be a branch of a merged conv, or None if it can."""
    kh, kw = onnx_filter_shape(conv)[2:]
    if (kh, kw) not in ((1, 1), (KERNEL, KERNEL)):
        return f"its kernel is {kh}x{kw}, not 1x1 or {KERNEL}x{KERNEL}"
    if conv.prop_value("pads") != (kh // 2,) * 4:
        return f"its pads {list(conv.prop_value('pads'))} do not center its {kh}x{kw} kernel"
    if conv.prop_value("dilations") != (1, 1):
        return "it is dilated"
    if not has_nchw_layout(conv):
        return "its layout is not NCHW"
    if constant_f64(conv.weight) is None or (conv.bias is not None and constant_f64(conv.bias) is None):
        return "its weight or bias is not a constant"
    if not conv.output.has_one_use():
        return "its result has other users"
    return None


@dataclass
class Branches:
    """The summands of one add tree that merge into a conv of `source`."""

    main: graph.Conv2dOp
    """The first 3x3 conv: the merged conv takes its input, stride, group and properties."""
    convs: list[graph.Conv2dOp] = field(default_factory=list)
    identity_scales: list[np.ndarray] = field(default_factory=list)
    shifts: list[np.ndarray] = field(default_factory=list)
    others: list[SSAValue] = field(default_factory=list)
    """Summands that stay: added to the merged conv's result."""
    absorbed: list[Operation] = field(default_factory=list)
    """The convs and muls that the merged conv replaces."""

    @property
    def source(self) -> SSAValue:
        return self.main.input

    @property
    def count(self) -> int:
        return len(self.convs) + len(self.identity_scales)

    def is_identity_like(self) -> bool:
        """Whether `x` itself has the merged conv's output type (stride 1, C_in == C_out)."""
        return self.main.prop_value("strides") == (1, 1) and self.source.type == self.main.output.type

    def add_conv(self, conv: graph.Conv2dOp) -> str | None:
        """Takes `conv` as a branch; returns why not when it cannot be one."""
        if conv.output.type != self.main.output.type:
            return "its result type differs from the 3x3 conv's"
        if conv.prop_value("strides") != self.main.prop_value("strides"):
            return "its strides differ from the 3x3 conv's"
        if conv.prop_value("group") != self.main.prop_value("group"):
            return "its group differs from the 3x3 conv's"
        if (reason := conv_refusal(conv)) is not None:
            return reason
        self.convs.append(conv)
        self.absorbed.append(conv)
        return None

    def add_identity(self, value: SSAValue) -> bool:
        """Takes `x`, `x * s` or `s * x` (s per channel) as an identity branch."""
        if not self.is_identity_like():
            return False
        if value is self.source:
            self.identity_scales.append(np.ones(self.source.type.get_shape()[1]))
            return True
        mul = value.owner
        if not isinstance(mul, graph.MulOp) or not value.has_one_use() or value.type != self.source.type:
            return False
        for operand, other in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
            if operand is self.source and (scale := per_channel(other, self.source.type)) is not None:
                self.identity_scales.append(scale)
                self.absorbed.append(mul)
                return True
        return False

    def merged_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """The merged 3x3 kernel (in the main conv's filter layout) and bias, in f64."""
        out_channels, per_group = onnx_filter_shape(self.main)[:2]
        kernel = np.zeros((out_channels, per_group, KERNEL, KERNEL))
        bias = np.zeros(out_channels)
        for conv in self.convs:
            weight = filter_in_onnx_order(conv, constant_f64(conv.weight))
            start = (KERNEL - weight.shape[2]) // 2
            kernel[:, :, start : start + weight.shape[2], start : start + weight.shape[3]] += weight
            if conv.bias is not None:
                bias += constant_f64(conv.bias)
        # Output channel o of group o // per_group reads input channel o as its (o % per_group)-th.
        channels = np.arange(out_channels)
        for scale in self.identity_scales:
            kernel[channels, channels % per_group, KERNEL // 2, KERNEL // 2] += scale
        for shift in self.shifts:
            bias += shift
        return filter_in_conv_order(self.main, kernel), bias


# ---------------------------------------------------------------------------- patterns


@dataclass
class MergeParallelConvs(RewritePattern):
    """add-tree(conv3x3(x), conv1x1(x), x * s, t, ...) -> conv3x3(x, merged weight and bias)."""

    owner: ModulePass
    note: NoteOnce

    @op_type_rewrite_pattern
    def match_and_rewrite(self, root: graph.AddOp, rewriter: PatternRewriter) -> None:
        if is_inner_add(root):
            return
        leaves, inner_adds = summands(root)
        branches = self.classify(root, leaves)
        if branches is None or branches.count < 2:
            return
        kernel, bias = branches.merged_weights()
        main = branches.main
        element_type = main.output.type.element_type
        base = name_base(main.weight, "conv")
        new_weight = new_constant(f"{base}.merged_weight", kernel, root.location, element_type)
        new_bias = new_constant(f"{base}.merged_bias", bias, root.location, element_type)
        merged = graph.Conv2dOp.create(
            operands=[branches.source, new_weight.output, new_bias.output],
            result_types=[main.output.type],
            properties=dict(main.properties),  # pads 1, its stride, group, layout...
            attributes=dict(main.attributes),
            location=main.location,
        )
        new_ops: list[Operation] = [new_weight, new_bias, merged]
        total = merged.output
        for other in branches.others:
            new_ops.append(graph.AddOp(total, other))
            total = new_ops[-1].results[0]
        for op in new_ops[3:]:
            op.location = root.location
        root_inputs = list(root.operands)
        rewriter.replace(root, new_ops, [total])
        erase_unused_producers(rewriter, root_inputs)
        # Users before producers: the inner adds (parents first), then the branches.
        for op in (*inner_adds, *branches.absorbed):
            inputs = list(op.operands)
            rewriter.erase(op)
            erase_unused_producers(rewriter, inputs)
        statistics.count(self.owner, "branches merged")

    def classify(self, root: graph.AddOp, leaves: list[SSAValue]) -> Branches | None:
        main = next(
            (
                leaf.owner
                for leaf in leaves
                if isinstance(leaf.owner, graph.Conv2dOp)
                and onnx_filter_shape(leaf.owner)[2:] == (KERNEL, KERNEL)
                and conv_refusal(leaf.owner) is None
            ),
            None,
        )
        if main is None or main.output.type != root.output.type:
            return None
        branches = Branches(main)
        for leaf in leaves:
            producer = leaf.owner
            if isinstance(producer, graph.Conv2dOp) and producer.input is branches.source:
                if (reason := branches.add_conv(producer)) is not None:
                    self.note(producer, f"{where(producer)} not merged into {where(main)}: {reason}")
                    branches.others.append(leaf)
            elif branches.add_identity(leaf):
                pass
            elif (shift := per_channel(leaf, root.output.type)) is not None:
                branches.shifts.append(shift)
            else:
                branches.others.append(leaf)
        return branches


@dataclass(frozen=True)
class ReparameterizeBranchesPass(ModulePass):
    """Merges the parallel conv branches of RepVGG-style blocks into one 3x3 conv.

    Requires: graph-level IR after fold-batchnorm, so that each branch's BN is in its
    conv's weight and bias and a lone identity BN is `x * s + t` with per-channel
    constants; conv weights and biases as `graph.constant`s.
    Guarantees: in every tree of `graph.add`s (inner adds feeding only their parent)
    that sums a 3x3 conv (pad 1, dilation 1, NCHW) with at least one more branch of the
    same input (a 1x1 conv with pad 0, same stride and group; or, at stride 1 with equal
    input and output channels, `x`, `x * s` or `s * x`), those branches and any
    per-channel constants in the tree are one 3x3 conv with the combined weight and
    bias; other summands are added to its result. Groups of any size are handled (the
    identity kernel sits in each channel's own group). A conv of the same input that
    cannot join (other users, stride, group, kernel size, dilation, layout, non-constant
    weight) stays a summand, with a note. The module computes the same function.
    "branches merged" counts the merged trees (one per RepVGG block).
    """

    name = "reparameterize-branches"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([MergeParallelConvs(self, NoteOnce(self))], dce_enabled=False)
        ).rewrite_module(op)
