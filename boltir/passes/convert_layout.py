"""convert-layout{layout=NHWC}: convs and pools in one activation layout, with the
transposes between them cancelled.

Every conv2d, conv_transpose2d, max_pool2d, avg_pool2d and global_avg_pool in another
layout gets `graph.transpose` ops around it (NCHW -> NHWC is perm [0, 2, 3, 1] in and
[0, 3, 1, 2] out) and takes the target layout; conv filters take the layout's filter
layout (NHWC: conv2d OIHW -> OHWI, conv_transpose2d IOHW -> IHWO, both the ONNX weight
transposed by [0, 2, 3, 1]), transposed at compile time when they are constants.

Then transposes move towards the outputs, through the ops that do not care about the
layout, until they meet their inverse and cancel:

- elementwise ops (unary, cast, the broadcasting binary ops, sum, where): every operand
  must be the same transpose, a constant (permuted at compile time, after extending its
  rank as ONNX broadcasting does: a [C,1,1] constant becomes [1,1,C]), a value whose
  permutation only moves size-1 dims (reshaped), or a value the IR already transposes
  back for another user (a residual's block input, transposed for the block's conv);
- batch_norm with constant statistics becomes `mul` and `add` by per-channel constants
  that broadcast along the channels-last axis;
- concat and split (axis remapped), softmax, cumsum and the reductions (axes remapped), resize,
  pad and slice (per-axis attributes permuted);
- reshape, flatten, squeeze and unsqueeze, where the dims they split or merge stay
  together in the other layout (a channel shuffle keeps only its own transpose);
- a transpose of a transpose composes (and vanishes when that is the identity);
- a flatten (or 2-D reshape) of a transpose feeding gemm/matmul classifiers with constant
  weights: the weight rows are permuted at compile time instead.

Moving a transpose forward through an op whose input has other users duplicates it
when it does not cancel further on; a clean-up takes it back before a chain of unary
ops where their input is transposed by the same perm anyway. A transpose left over that
only moves size-1 dims becomes a `graph.reshape`, and a reshape feeding a reshape or
flatten merges with it (global_avg_pool's N×1×1×C result -> flatten is one flatten).
Identical transposes of one value are merged.

Requires: graph-level IR. Guarantees: every conv and pool is in `layout`, with that
layout's filter layout; the module computes the same function.

Statistics: "convs converted", "pools converted", "weights transposed" (constant filters
rewritten), "transposes inserted" (around the converted ops, and on filters that are not
constants), "transposes cancelled" (transposes gone: inverse pairs, folded into constants
or weights; = transposes before + inserted - left - turned into reshapes), "transposes
turned into reshapes", "batchnorms rewritten" (as mul/add, to move a transpose past
them), "classifier weights permuted", and "transposes left" (every graph.transpose in the
module afterwards, reported even when 0).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dialects.graph import FILTER_LAYOUTS, LAYOUTS, f64_array, i64_array, i64_attr, tensor_shape
from boltir.passes import statistics
from boltir.passes.common import (
    CHANNELS_FIRST,
    CHANNELS_LAST,
    batch_norm_affine,
    constant_name,
    constant_of,
    new_constant,
    where,
)

Perm = tuple[int, ...]

CONVS = (graph.Conv2dOp, graph.ConvTranspose2dOp)
POOLS = (graph.MaxPool2dOp, graph.AvgPool2dOp, graph.GlobalAvgPoolOp)



# ------------------------------------------------------------------- permutations


def channels_last_perm(rank: int) -> Perm:
    """N×C×D1×…×Dk -> N×D1×…×Dk×C."""
    return (0, *range(2, rank), 1)


def inverse(perm: Sequence[int]) -> Perm:
    result = [0] * len(perm)
    for index, axis in enumerate(perm):
        result[axis] = index
    return tuple(result)


def permute(values: Sequence, perm: Sequence[int]) -> tuple:
    """What a transpose by `perm` does to a shape: result[k] = values[perm[k]]."""
    return tuple(values[p] for p in perm)


def is_identity(perm: Sequence[int]) -> bool:
    return all(p == i for i, p in enumerate(perm))


def moves_only_unit_dims(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """Whether transposing `shape` by `perm` keeps the row-major element order: the dims
    larger than 1 stay in order, so the transpose is a reshape."""
    kept = [p for p in perm if shape[p] != 1]
    return kept == sorted(kept)


def layout_perm(target: str, rank: int) -> Perm:
    """The transpose of activations from the other layout into `target`."""
    perm = channels_last_perm(rank)
    return perm if target == "NHWC" else inverse(perm)


# ------------------------------------------------------------------------ helpers


def transpose_of(value: SSAValue) -> graph.TransposeOp | None:
    return value.owner if isinstance(value.owner, graph.TransposeOp) else None


def perm_of(op: graph.TransposeOp) -> Perm:
    return tuple(op.prop_value("perm"))


def new_transpose(value: SSAValue, perm: Sequence[int], location) -> graph.TransposeOp:
    op = graph.TransposeOp(value, perm)
    op.location = location
    return op


def with_shape(value_type: TensorType, shape: Sequence[int]) -> TensorType:
    return TensorType(value_type.element_type, tuple(shape))


def target_filter_layout(op: Operation, layout: str) -> str:
    onnx_layout, channels_last = FILTER_LAYOUTS[op.name]
    return channels_last if layout == "NHWC" else onnx_layout


def count_transposes(module: Operation) -> int:
    return sum(isinstance(op, graph.TransposeOp) for op in module.walk())


def note_transposes_left(owner: ModulePass, module: Operation) -> None:
    """Says, for --pass-stats, why each transpose is still there."""
    for op in module.walk():
        if not isinstance(op, graph.TransposeOp):
            continue
        perm = ", ".join(map(str, perm_of(op)))
        if isinstance(op.input, BlockArgument):
            reason = "it reads a model input"
        else:
            reason = f"it reads {op.input.owner.name}"
        users = sorted({use.operation.name for use in op.output.uses})
        statistics.note(owner, f"left {where(op)} (perm [{perm}]): {reason} and feeds {', '.join(users)}")


@dataclass
class Tally:
    """Counts into the pass statistics and keeps its own totals, which the pass needs
    for "transposes cancelled" whether or not anybody collects statistics."""

    owner: ModulePass
    totals: Counter[str] = field(default_factory=Counter)

    def count(self, what: str, amount: int = 1) -> None:
        self.totals[what] += amount
        statistics.count(self.owner, what, amount)


# ------------------------------------------------------- 1. convert convs and pools


@dataclass
class ConvertConvLayout(RewritePattern):
    """conv(x, W) -> transpose(conv_nhwc(transpose(x), W_ohwi)), pools alike (and back
    to NCHW for layout=NCHW)."""

    tally: Tally
    layout: str

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, CONVS + POOLS):
            return
        is_conv = isinstance(op, CONVS)
        layout = op.prop_value("layout")
        filter_layout = op.prop_value("filter_layout") if is_conv else None
        wanted_filter = target_filter_layout(op, self.layout) if is_conv else None
        if layout == self.layout and filter_layout == wanted_filter:
            return
        new_ops: list[Operation] = []
        operands = list(op.operands)
        properties = dict(op.properties)
        result_type = op.results[0].type
        into = None
        if layout != self.layout:
            into = layout_perm(self.layout, len(tensor_shape(op.operands[0].type)))
            transpose_in = new_transpose(operands[0], into, op.location)
            new_ops.append(transpose_in)
            operands[0] = transpose_in.output
            properties["layout"] = StringAttr(self.layout)
            result_type = with_shape(result_type, permute(tensor_shape(result_type), into))
            self.tally.count("transposes inserted", 2)
        if is_conv and filter_layout != wanted_filter:
            perm = CHANNELS_LAST if wanted_filter == FILTER_LAYOUTS[op.name][1] else CHANNELS_FIRST
            weight = constant_of(op.weight)
            if weight is not None:
                suffix = wanted_filter.lower()
                new_weight = new_constant(f"{constant_name(op.weight, 'weight')}.{suffix}", weight.transpose(perm), op.location)
                self.tally.count("weights transposed")
            else:
                new_weight = new_transpose(op.weight, perm, op.location)
                self.tally.count("transposes inserted")
            new_ops.append(new_weight)
            operands[1] = new_weight.results[0]
            properties["filter_layout"] = StringAttr(wanted_filter)
        new = type(op).create(
            operands=operands,
            result_types=[result_type],
            properties=properties,
            attributes=dict(op.attributes),
            location=op.location,
        )
        new_ops.append(new)
        result = new.results[0]
        if into is not None:
            transpose_out = new_transpose(result, inverse(into), op.location)
            new_ops.append(transpose_out)
            result = transpose_out.output
        rewriter.replace(op, new_ops, [result])
        self.tally.count("convs converted" if is_conv else "pools converted")


# ------------------------------------------------- 2. move transposes and cancel them


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p∘q), or x when that is the identity."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = transpose_of(op.input)
        if inner is None:
            return
        composed = permute(perm_of(inner), perm_of(op))
        if is_identity(composed):
            rewriter.replace(op, [], [inner.input])
        else:
            rewriter.replace(op, [new_transpose(inner.input, composed, op.location)])


class FoldTransposeOfConstant(RewritePattern):
    """transpose(constant) -> the constant, transposed at compile time."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TransposeOp, rewriter: PatternRewriter) -> None:
        value = constant_of(op.input)
        if value is None:
            return
        name = constant_name(op.input)
        rewriter.replace(op, [new_constant(f"{name}.transposed", value.transpose(perm_of(op)), op.location)])


def existing_transpose(value: SSAValue, perm: Perm, op: Operation) -> SSAValue | None:
    """A transpose of `value` by `perm` that the IR already holds, usable by `op` (moved
    up to just after `value`'s definition when it comes after `op`)."""
    block = op.parent
    for use in value.uses:
        other = use.operation
        if not isinstance(other, graph.TransposeOp) or perm_of(other) != perm or other.parent is not block:
            continue
        if not other.is_before_in_block(op):
            owner = value.owner
            if isinstance(owner, Operation):
                if owner.parent is not block:
                    continue
                other.detach()
                block.insert_op_after(other, owner)
            else:
                if value.block is not block:
                    continue
                other.detach()
                block.insert_op_before(other, block.first_op)
        return other.output
    return None


def broadcast_operands(
    operands: Sequence[SSAValue], rank: int, op: Operation
) -> tuple[Perm, list[SSAValue], list[Operation]] | None:
    """For an elementwise op of result rank `rank` with a transposed operand: the perm
    p, and operands a_i with op(operands) = transpose(op(a_i), p), plus the ops that
    make them. None if some operand cannot be brought into the untransposed space."""
    location = op.location
    perm = None
    for value in operands:
        producer = transpose_of(value)
        if producer is not None and len(perm_of(producer)) == rank:
            perm = perm_of(producer)
            break
    if perm is None:
        return None
    back = inverse(perm)
    values: list[SSAValue] = []
    new_ops: list[Operation] = []
    for value in operands:
        producer = transpose_of(value)
        if producer is not None and perm_of(producer) == perm:
            values.append(producer.input)
            continue
        shape = tensor_shape(value.type)
        if len(shape) > rank:
            return None
        extended = (1,) * (rank - len(shape)) + shape
        permuted = permute(extended, back)
        # Leading 1s are implied by broadcasting: keep the operand's rank where possible.
        strip = 0
        while strip < rank - len(shape) and permuted[strip] == 1:
            strip += 1
        target = permuted[strip:]
        trivial = moves_only_unit_dims(extended, back)
        if trivial and target == shape:
            values.append(value)
            continue
        array = constant_of(value)
        if array is None and len(shape) == rank and (reused := existing_transpose(value, back, op)) is not None:
            if reused in operands:  # op(transpose(x), x): the new op would read a transpose again, forever
                return None
            values.append(reused)
        elif array is not None:
            moved = array.reshape(extended).transpose(back).reshape(target)
            constant = new_constant(f"{constant_name(value)}.transposed", moved, location)
            new_ops.append(constant)
            values.append(constant.output)
        elif trivial:
            reshape = graph.ReshapeOp(value, target)
            reshape.location = location
            new_ops.append(reshape)
            values.append(reshape.output)
        else:
            return None
    return perm, values, new_ops


ELEMENTWISE = (graph.UnaryOp, graph.CastOp, graph.BinaryOp, graph.SumOp, graph.WhereOp)


class PushThroughElementwise(RewritePattern):
    """f(transpose(a, p), c) -> transpose(f(a, c'), p), c' the constant permuted back."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ELEMENTWISE):
            return
        result_type = op.results[0].type
        shape = tensor_shape(result_type)
        plan = broadcast_operands(list(op.operands), len(shape), op)
        if plan is None:
            return
        perm, values, new_ops = plan
        new = type(op).create(
            operands=values,
            result_types=[with_shape(result_type, permute(shape, inverse(perm)))],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            location=op.location,
        )
        transpose = new_transpose(new.results[0], perm, op.location)
        rewriter.replace(op, [*new_ops, new, transpose], [transpose.output])


@dataclass
class PushThroughBatchNorm(RewritePattern):
    """batch_norm(transpose(y, p)) -> transpose(y * s + t, p), s and t per channel,
    shaped to broadcast along the channel axis of y (the last, for NHWC)."""

    tally: Tally

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
        producer = transpose_of(op.input)
        affine = batch_norm_affine(op)
        if producer is None or affine is None:
            return
        perm = perm_of(producer)
        y = producer.input
        s, t = affine
        rank = len(tensor_shape(y.type))
        channel_axis = perm[1]
        shape = (-1,) + (1,) * (rank - 1 - channel_axis)
        element_type = y.type.element_type
        name = constant_name(op.scale, "batch_norm")
        s_op = new_constant(f"{name}.bn_scale", s.reshape(shape), op.location, element_type)
        t_op = new_constant(f"{name}.bn_shift", t.reshape(shape), op.location, element_type)
        mul = graph.MulOp(y, s_op.output)
        add = graph.AddOp(mul.output, t_op.output)
        mul.location = add.location = op.location
        transpose = new_transpose(add.output, perm, op.location)
        rewriter.replace(op, [s_op, t_op, mul, add, transpose], [transpose.output])
        self.tally.count("batchnorms rewritten")


def axis_props(op: Operation, perm: Perm, rank: int) -> dict | None:
    """The properties of `op` moved from the transposed space into the untransposed one:
    an axis k becomes perm[k]; a per-axis list is permuted back."""
    props = dict(op.properties)
    back = inverse(perm)
    if isinstance(op, graph.ConcatOp | graph.SoftmaxOp | graph.SplitOp | graph.CumSumOp):
        props["axis"] = i64_attr(perm[op.prop_value("axis") % rank])
    elif isinstance(op, graph.ReduceOp | graph.SliceOp):
        props["axes"] = i64_array([perm[a % rank] for a in op.prop_value("axes")])
    elif isinstance(op, graph.PadOp):
        pads = op.prop_value("pads")
        props["pads"] = i64_array(permute(pads[:rank], back) + permute(pads[rank:], back))
    elif isinstance(op, graph.ResizeOp):
        props["scales"] = f64_array(permute(op.prop_value("scales"), back))
        roi = op.prop_value("roi")
        if roi:
            props["roi"] = f64_array(permute(roi[:rank], back) + permute(roi[rank:], back))
    else:
        return None
    return props


def reduced_perm(op: graph.ReduceOp, perm: Perm, rank: int) -> Perm:
    """The transpose after a reduction of the untransposed value (without keepdims the
    reduced axes are gone from both sides)."""
    if op.prop_value("keepdims"):
        return perm
    reduced = {perm[a % rank] for a in op.prop_value("axes")}
    kept_axes = sorted(a for a in range(rank) if a not in reduced)
    position = {axis: index for index, axis in enumerate(kept_axes)}
    original_reduced = {a % rank for a in op.prop_value("axes")}
    return tuple(position[perm[k]] for k in range(rank) if k not in original_reduced)


AXIS_OPS = (
    graph.ConcatOp, graph.SoftmaxOp, graph.SplitOp, graph.ReduceOp, graph.SliceOp, graph.PadOp, graph.ResizeOp, graph.CumSumOp,
)


class PushThroughAxisOps(RewritePattern):
    """op(transpose(a, p)) -> transpose(op'(a), p) for ops with axes: concat (of
    transposes with one perm, or constants), split, softmax, cumsum, reductions, slice,
    pad and resize, with the axes (or per-axis values) moved into a's order."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, AXIS_OPS):
            return
        first = transpose_of(op.operands[0])
        if first is None:
            return
        perm = perm_of(first)
        rank = len(perm)
        back = inverse(perm)
        new_ops: list[Operation] = []
        values: list[SSAValue] = []
        for value in op.operands:
            producer = transpose_of(value)
            array = constant_of(value)
            if producer is not None and perm_of(producer) == perm:
                values.append(producer.input)
            elif array is None and (reused := existing_transpose(value, back, op)) is not None:
                values.append(reused)
            elif array is not None:
                constant = new_constant(f"{constant_name(value)}.transposed", array.transpose(back), op.location)
                new_ops.append(constant)
                values.append(constant.output)
            else:
                return
        props = axis_props(op, perm, rank)
        if props is None:
            return
        result_perm = reduced_perm(op, perm, rank) if isinstance(op, graph.ReduceOp) else perm
        new = type(op).create(
            operands=values,
            result_types=[
                with_shape(r.type, permute(tensor_shape(r.type), inverse(result_perm))) for r in op.results
            ],
            properties=props,
            attributes=dict(op.attributes),
            location=op.location,
        )
        new_ops.append(new)
        results: list[SSAValue] = []
        for result in new.results:
            if is_identity(result_perm):
                results.append(result)
            else:
                transpose = new_transpose(result, result_perm, op.location)
                new_ops.append(transpose)
                results.append(transpose.output)
        rewriter.replace(op, new_ops, results)


def reshape_blocks(source: Sequence[int], target: Sequence[int]) -> list[tuple[list[int], list[int]]] | None:
    """A row-major reshape as blocks of (source axes, target axes) with equal sizes,
    size-1 axes left out; None when the sizes do not line up."""
    s_axes = [k for k, d in enumerate(source) if d != 1]
    t_axes = [j for j, d in enumerate(target) if d != 1]
    blocks: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(s_axes) and j < len(t_axes):
        block_s, block_t = [s_axes[i]], [t_axes[j]]
        size_s, size_t = source[s_axes[i]], target[t_axes[j]]
        i, j = i + 1, j + 1
        while size_s != size_t:
            if size_s < size_t and i < len(s_axes):
                size_s *= source[s_axes[i]]
                block_s.append(s_axes[i])
                i += 1
            elif size_t < size_s and j < len(t_axes):
                size_t *= target[t_axes[j]]
                block_t.append(t_axes[j])
                j += 1
            else:
                return None
        blocks.append((block_s, block_t))
    return blocks if i == len(s_axes) and j == len(t_axes) else None


def reshape_plan(x_shape: Sequence[int], perm: Perm, target: Sequence[int]) -> tuple[Perm, tuple[int, ...], Perm] | None:
    """For reshape(transpose(x, perm), target): (inner, shape, outer) with
    reshape(transpose(x, perm)) = transpose(reshape(transpose(x, inner), shape), outer).
    Each block of dims the reshape splits or merges is one dim or a run of adjacent dims
    of x, in order, after `inner` (the identity, up to size-1 dims, unless a merge needs
    x's dims in another order)."""
    blocks = reshape_blocks(permute(x_shape, perm), target)
    if blocks is None:
        return None
    x_blocks = [[perm[k] for k in block_s] for block_s, _ in blocks]
    block_of = {axis: index for index, axes in enumerate(x_blocks) for axis in axes}
    inner: list[int] = []
    order: list[int] = []
    for axis, size in enumerate(x_shape):
        if size == 1:
            inner.append(axis)
        elif block_of[axis] not in order:
            order.append(block_of[axis])
            inner.extend(x_blocks[block_of[axis]])
    # The result dims in x's order, each size-1 dim of the target right after the dim
    # it follows there (or first), so that the transpose after moves as little as it can.
    leading: list[int] = []
    following: dict[int, list[int]] = {}
    previous = None
    for axis, size in enumerate(target):
        if size != 1:
            previous = axis
        elif previous is None:
            leading.append(axis)
        else:
            following.setdefault(previous, []).append(axis)
    sequence = leading + [
        axis for index in order for dim in blocks[index][1] for axis in (dim, *following.get(dim, []))
    ]
    position = {axis: index for index, axis in enumerate(sequence)}
    shape = tuple(target[axis] for axis in sequence)
    return tuple(inner), shape, tuple(position[axis] for axis in range(len(target)))


RESHAPE_LIKE = (graph.ReshapeOp, graph.FlattenOp, graph.SqueezeOp, graph.UnsqueezeOp)


def reshape_like(op: Operation, source: SSAValue, shape: Sequence[int]) -> Operation:
    """`source` reshaped to `shape`: a flatten where `op` is one and its axis gives that
    shape, else a graph.reshape."""
    source_shape = tensor_shape(source.type)
    if isinstance(op, graph.FlattenOp):
        axis = op.prop_value("axis")
        if 0 <= axis <= len(source_shape):
            rows = int(np.prod(source_shape[:axis], dtype=np.int64))
            if (rows, int(np.prod(source_shape[axis:], dtype=np.int64))) == tuple(shape):
                new = graph.FlattenOp(source, axis)
                new.location = op.location
                return new
    new = graph.ReshapeOp(source, shape)
    new.location = op.location
    return new


class PushThroughReshape(RewritePattern):
    """reshape(transpose(x, p)) -> transpose(reshape'(x), p') where the reshape splits
    dims, or merges dims that are adjacent and in order in x too; where a merge needs
    x's dims in another order (a channel shuffle's), a smaller transpose stays before
    the reshape. Only where it pays: the transpose vanishes (a flatten of a
    channels-last N×1×1×C), or every user of the reshape is a transpose it composes with."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, RESHAPE_LIKE):
            return
        producer = transpose_of(op.operands[0])
        if producer is None:
            return
        x = producer.input
        x_shape = tensor_shape(x.type)
        plan = reshape_plan(x_shape, perm_of(producer), tensor_shape(op.results[0].type))
        if plan is None:
            return
        inner, shape, outer = plan
        inner_needed = not moves_only_unit_dims(x_shape, inner)
        outer_needed = not moves_only_unit_dims(shape, outer)
        if not inner_needed and not outer_needed:  # the transpose vanishes
            rewriter.replace(op, [reshape_like(op, x, tensor_shape(op.results[0].type))])
            return
        if not outer_needed or not all(isinstance(use.operation, graph.TransposeOp) for use in op.results[0].uses):
            return
        new_ops: list[Operation] = []
        if inner_needed:
            new_ops.append(new_transpose(x, inner, op.location))
            x = new_ops[-1].results[0]
        new_ops.append(reshape_like(op, x, shape))
        result = new_ops[-1].results[0]
        if not is_identity(outer):
            new_ops.append(new_transpose(result, outer, op.location))
            result = new_ops[-1].results[0]
        rewriter.replace(op, new_ops, [result])


def classifier_users(value: SSAValue) -> list[Operation] | None:
    """The gemm / matmul ops reading `value` (N×K) as their left operand against a
    constant K×M (or M×K) weight, when they are all its users."""
    users = [use.operation for use in value.uses]
    for use in value.uses:
        op = use.operation
        if isinstance(op, graph.GemmOp):
            if use.index != 0 or op.prop_value("trans_a") or constant_of(op.b) is None:
                return None
        elif isinstance(op, graph.MatMulOp):
            if use.index != 0 or constant_of(op.rhs) is None or len(tensor_shape(op.rhs.type)) != 2:
                return None
        else:
            return None
    return users or None


@dataclass
class FoldTransposeIntoClassifier(RewritePattern):
    """gemm(flatten(transpose(x, p)), W) -> gemm(flatten(x), W'): the rows of W are
    permuted at compile time (the batch axis must stay first)."""

    tally: Tally

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.FlattenOp | graph.ReshapeOp):
            return
        producer = transpose_of(op.input)
        if producer is None:
            return
        perm = perm_of(producer)
        if moves_only_unit_dims(tensor_shape(producer.input.type), perm):
            return  # a reshape (TransposeToReshape), no weight to permute
        transposed = tensor_shape(producer.output.type)
        out = tensor_shape(op.output.type)
        if perm[0] != 0 or out != (transposed[0], int(np.prod(transposed[1:], dtype=np.int64))):
            return
        users = classifier_users(op.output)
        if users is None:
            return
        # Row k of flatten(transpose(x)) is row order[r] of flatten(x).
        index = np.arange(out[1]).reshape((1, *transposed[1:]))
        order = index.transpose(inverse(perm)).reshape(-1)
        flatten = graph.FlattenOp(producer.input, 1)
        flatten.location = op.location
        rewriter.insert(flatten)
        for user in users:
            if isinstance(user, graph.GemmOp):
                weight = constant_of(user.b)
                moved = weight[:, order] if user.prop_value("trans_b") else weight[order]
                name = constant_name(user.b, "gemm_weight")
                constant = new_constant(f"{name}.permuted", moved, user.location)
                operands = [flatten.output, constant.output, *user.operands[2:]]
            else:
                weight = constant_of(user.rhs)
                constant = new_constant(f"{constant_name(user.rhs, 'matmul_weight')}.permuted", weight[order], user.location)
                operands = [flatten.output, constant.output]
            new = type(user).create(
                operands=operands,
                result_types=[user.results[0].type],
                properties=dict(user.properties),
                attributes=dict(user.attributes),
                location=user.location,
            )
            rewriter.replace(user, [constant, new])
            self.tally.count("classifier weights permuted")


# --------------------------------------------------------- 3. reshapes and clean-up


@dataclass
class TransposeToReshape(RewritePattern):
    """A transpose that only moves size-1 dims is a reshape."""

    tally: Tally

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TransposeOp, rewriter: PatternRewriter) -> None:
        if not moves_only_unit_dims(tensor_shape(op.input.type), perm_of(op)):
            return
        reshape = graph.ReshapeOp(op.input, tensor_shape(op.output.type))
        reshape.location = op.location
        rewriter.replace(op, [reshape])
        self.tally.count("transposes turned into reshapes")


UNARY = (graph.UnaryOp, graph.CastOp)


class ShareTransposeBeforeUnaryChain(RewritePattern):
    """transpose(f(g(a)), p), where a is transposed by p anyway (for another user):
    f(g(transpose(a, p))), one transpose fewer. Moving transposes forward through
    unary ops pays off when they cancel further on; this takes it back where they did
    not and the value they left also kept its own transpose."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = perm_of(op)
        chain: list[Operation] = []
        value = op.input
        while isinstance(value.owner, UNARY) and value.has_one_use():
            chain.append(value.owner)
            value = value.owner.operands[0]
        if not chain:
            return
        shared = existing_transpose(value, perm, op)
        if shared is None:
            return
        new_ops: list[Operation] = []
        for unary in reversed(chain):
            result_type = unary.results[0].type
            new = type(unary).create(
                operands=[shared],
                result_types=[with_shape(result_type, permute(tensor_shape(result_type), perm))],
                properties=dict(unary.properties),
                attributes=dict(unary.attributes),
                location=unary.location,
            )
            new_ops.append(new)
            shared = new.results[0]
        rewriter.replace(op, new_ops, [shared])


class MergeReshapes(RewritePattern):
    """reshape-like(reshape(x)) -> one reshape of x (a flatten stays a flatten where its
    axis gives the same shape); nothing at all when the shape comes back to x's."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, RESHAPE_LIKE) or not isinstance(op.operands[0].owner, graph.ReshapeOp):
            return
        source = op.operands[0].owner.input
        shape = tensor_shape(op.results[0].type)
        if shape == tensor_shape(source.type):
            rewriter.replace(op, [], [source])
        else:
            rewriter.replace(op, [reshape_like(op, source, shape)])


def merge_duplicate_transposes(module: ModuleOp) -> None:
    """Transposes of one value by one perm, in one block, become the first of them."""
    for op in list(module.walk()):
        if not isinstance(op, graph.TransposeOp) or op.parent is None:
            continue
        for use in list(op.input.uses):
            other = use.operation
            if (
                other is not op
                and isinstance(other, graph.TransposeOp)
                and other.parent is op.parent
                and perm_of(other) == perm_of(op)
                and op.is_before_in_block(other)
            ):
                other.output.replace_all_uses_with(op.output)
                other.detach()
                other.erase()


# ----------------------------------------------------------------------- the pass


@dataclass(frozen=True)
class ConvertLayoutPass(ModulePass):
    """Puts every conv and pool in `layout` (NHWC or NCHW) and cancels the transposes
    that takes, moving them through layout-agnostic ops (see the module docstring).

    Requires: graph-level IR (fold-batchnorm before it leaves fewer batch norms to
    rewrite). Guarantees: every conv2d, conv_transpose2d, max_pool2d, avg_pool2d and
    global_avg_pool is in `layout`, convs with its filter layout (NHWC: OHWI, IHWO);
    transposes are left only where a layout-sensitive op, a model input or output needs
    them; the module computes the same function."""

    name = "convert-layout"

    layout: str = "NHWC"

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise BoltError(f"layout must be one of {', '.join(LAYOUTS)}, got '{self.layout}'")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tally = Tally(self)
        before = count_transposes(op)
        PatternRewriteWalker(ConvertConvLayout(tally, self.layout), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    ComposeTransposes(),
                    FoldTransposeOfConstant(),
                    PushThroughElementwise(),
                    PushThroughBatchNorm(tally),
                    PushThroughAxisOps(),
                    PushThroughReshape(),
                    FoldTransposeIntoClassifier(tally),
                ]
            )
        ).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([ShareTransposeBeforeUnaryChain(), TransposeToReshape(tally), MergeReshapes()])
        ).rewrite_module(op)
        merge_duplicate_transposes(op)
        left = count_transposes(op)
        inserted = tally.totals["transposes inserted"]
        reshaped = tally.totals["transposes turned into reshapes"]
        statistics.count(self, "transposes cancelled", max(0, before + inserted - left - reshaped))
        statistics.count(self, "transposes left", left)
        note_transposes_left(self, op)
