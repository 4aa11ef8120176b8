"""commute-transposes: a transpose of the leading axes moves across the row-wise ops
next to it, to the side where it meets other data movement.

A row-wise op computes each row (the last axis) of its result from the same row of one
operand: a GEMM on the last axis (A row-major, a 2-D B, any epilogue without a
residual: a bias and an activation act per column), a unary op, a cast, and a binary op
whose other operand varies only along the last axis. A `layout_transform` whose
permutation keeps the last axis in place (a "leading transpose") therefore commutes with
it: `gemm(transpose(x)) == transpose(gemm(x))`. So does a reshape that keeps the last
axis, which changes only how the rows are counted.

torch.onnx writes `nn.MultiheadAttention(batch_first=True)` sequence-first inside:
x [B, S, E] is transposed to [S, B, E] before the input projection, and the output
projection's [S, B, E] result transposed back. Each of those transposes sits between a
row-wise chain and a non-data-movement op (a LayerNorm, the residual add) on one side,
and the heads' reshapes and transposes on the other. This pass moves each leading
transpose along its chain of row-wise ops to the end where data movement is, and
nothing else moves it back: there it composes with the next transpose (or cancels), or
fold-attention-layouts reads the whole chain as a view. The chain's ends decide, so a
transpose never moves back and forth: it moves down when only the consumers at the
chain's lower end are data movement, up when only the producer at its upper end is.
A reshape that keeps the last axis between a row-wise op and a transpose moving up is
moved above the row-wise op with it, so that the projection reads the [B, S, E] rows.
So is one between a GEMM (with its bias and activation) and an add or multiply: the
GEMM then meets what fuse-epilogue takes as its residual (at batch 1 the exporter's
sequence-first transposes are reshapes, and the residual adds run on [S, 1, E]).

Requires: op-level IR, before fuse-epilogue folds residual adds into GEMMs (a GEMM with
a residual is not row-wise here, and the residual add has to meet the GEMM for it to
fuse).
Guarantees: the same function, with every leading transpose adjacent to a row-wise
chain at its data-movement end where there is one; two transposes that meet are one
(none where they cancel); no reshape between a GEMM and an add, a multiply or an
epilogue activation; no reshape of a reshape, none to its input's own shape. Every
rewrite keeps the number of launches or lowers it.

Statistics: "transposes moved down", "transposes moved up", "reshapes moved up",
"transposes composed", "transposes cancelled", "reshapes composed", "reshapes removed"
(a reshape of a reshape is one reshape, and a reshape to its input's shape is none).
"""

from __future__ import annotations

from dataclasses import dataclass

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

from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape
from boltir.passes import statistics

DATA_MOVEMENT = (ops.ReshapeOp, ops.LayoutTransformOp, ops.GatherOp, ops.SliceOp)


# ------------------------------------------------------------------- row-wise ops


def varies_along_last_axis_only(value: SSAValue, rank: int) -> bool:
    shape = tensor_shape(value.type)
    return len(shape) <= rank and all(extent == 1 for extent in shape[:-1])


def row_operand(op: Operation | None) -> SSAValue | None:
    """The operand whose rows a row-wise op maps to its result's rows; None for any
    other op."""
    if isinstance(op, ops.GemmOp):
        row_gemm = op.prop_value("layout_a") == "row" and op.residual is None and op.a is not op.b
        if row_gemm and op.b.type.get_num_dims() == 2 and op.a.type.get_num_dims() >= 2:
            return op.a
        return None
    if isinstance(op, ops.UnaryOp | ops.CastOp):
        return op.input
    if isinstance(op, ops.BinaryOp) and op.lhs is not op.rhs:
        rank = op.output.type.get_num_dims()
        for row, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if row.type.get_shape() == op.output.type.get_shape() and varies_along_last_axis_only(other, rank):
                return row
    return None


def sole_user(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def with_rows(op: Operation, rows: SSAValue) -> Operation | None:
    """`op` reading `rows` instead of its row operand: the result has `rows`' leading
    axes; None where another operand would not broadcast to it any more."""
    old = row_operand(op)
    shape = tensor_shape(rows.type)[:-1] + tensor_shape(op.output.type)[-1:]
    others = [value for value in op.operands if value is not old]
    if isinstance(op, ops.BinaryOp) and any(value.type.get_num_dims() > len(shape) for value in others):
        return None
    new = type(op).create(
        operands=[rows if value is old else value for value in op.operands],
        result_types=[TensorType(op.output.type.element_type, shape)],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    new.location = op.location
    return new


# -------------------------------------------------------------- the chain's ends


def is_leading_transpose(op: Operation | None) -> bool:
    if not isinstance(op, ops.LayoutTransformOp):
        return False
    perm = op.prop_value("perm")
    return len(perm) >= 2 and perm[-1] == len(perm) - 1


def keeps_last_axis(op: Operation | None) -> bool:
    if not isinstance(op, ops.ReshapeOp):
        return False
    source, result = tensor_shape(op.input.type), tensor_shape(op.output.type)
    return len(source) >= 2 and len(result) >= 2 and source[-1] == result[-1]


def upper_end(value: SSAValue) -> Operation | None:
    """The op at the top of the row-wise chain (and reshapes that keep the last axis)
    that ends in `value`: each result on the way used once."""
    while sole_user(value) is not None:
        owner = value.owner
        rows = row_operand(owner) if isinstance(owner, Operation) else None
        if rows is None and keeps_last_axis(owner):
            rows = owner.input
        if rows is None:
            break
        value = rows
    return value.owner if isinstance(value.owner, Operation) else None


def lower_end_moves_data(value: SSAValue) -> bool:
    """Whether the row-wise chain that starts at `value` (each result used once) ends
    in data movement: every user of its last result is a data-movement op."""
    while (user := sole_user(value)) is not None and row_operand(user) is value:
        value = user.results[0]
    users = [use.operation for use in value.uses]
    return bool(users) and all(isinstance(user, DATA_MOVEMENT) for user in users)


def direction(transpose: ops.LayoutTransformOp) -> str | None:
    """"down" or "up": towards the one end of the transpose's chain that is data movement."""
    above = isinstance(upper_end(transpose.input), DATA_MOVEMENT)
    below = lower_end_moves_data(transpose.output)
    if below and not above:
        return "down"
    if above and not below:
        return "up"
    return None


# ------------------------------------------------------------------------ rewrites


class CommuteTransposes(RewritePattern):
    def __init__(self, owner: ModulePass):
        self.owner = owner

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ops.LayoutTransformOp, rewriter: PatternRewriter) -> None:
        if self.compose(op, rewriter) or not is_leading_transpose(op):
            return
        way = direction(op)
        if way == "down":
            self.move_down(op, rewriter)
        elif way == "up":
            self.move_up(op, rewriter)

    def compose(self, op: ops.LayoutTransformOp, rewriter: PatternRewriter) -> bool:
        """transpose(transpose(x)) is one transpose of x, or x itself."""
        inner = op.input.owner if isinstance(op.input.owner, ops.LayoutTransformOp) else None
        perm = tuple(op.prop_value("perm"))
        composed = tuple(inner.prop_value("perm")[p] for p in perm) if inner is not None else perm
        identity = composed == tuple(range(len(composed)))
        if inner is None and not identity:
            return False
        source = inner.input if inner is not None else op.input
        if identity:
            rewriter.replace(op, [], [source])
            statistics.count(self.owner, "transposes cancelled")
        else:
            new = ops.LayoutTransformOp(source, composed)
            new.location = op.location
            rewriter.replace(op, [new])
            statistics.count(self.owner, "transposes composed")
        if inner is not None and not inner.output.uses:
            rewriter.erase(inner)
        return True

    def move_down(self, op: ops.LayoutTransformOp, rewriter: PatternRewriter) -> None:
        user = sole_user(op.output)
        if user is None or row_operand(user) is not op.output:
            return
        moved = with_rows(user, op.input)
        if moved is None:
            return
        transpose = ops.LayoutTransformOp(moved.results[0], op.prop_value("perm"))
        transpose.location = op.location
        rewriter.replace(user, [moved, transpose])
        rewriter.erase(op)
        statistics.count(self.owner, "transposes moved down")

    def move_up(self, op: ops.LayoutTransformOp, rewriter: PatternRewriter) -> None:
        producer = op.input.owner
        if keeps_last_axis(producer):
            if hoist_reshape(producer, rewriter):
                statistics.count(self.owner, "reshapes moved up")
            return
        rows = row_operand(producer)
        if rows is None or sole_user(op.input) is not op:
            return
        transpose = ops.LayoutTransformOp(rows, op.prop_value("perm"))
        transpose.location = op.location
        moved = with_rows(producer, transpose.output)
        if moved is None:
            return
        rewriter.replace(op, [transpose, moved])
        rewriter.erase(producer)
        statistics.count(self.owner, "transposes moved up")


def hoist_reshape(reshape: ops.ReshapeOp, rewriter: PatternRewriter) -> bool:
    """reshape(row_op(x)) -> row_op(reshape(x)), the reshape keeping the last axis."""
    producer = reshape.input.owner
    rows = row_operand(producer)
    if rows is None or sole_user(reshape.input) is not reshape:
        return False
    leading = tensor_shape(reshape.output.type)[:-1]
    moved_reshape = ops.ReshapeOp(rows, leading + tensor_shape(rows.type)[-1:])
    moved_reshape.location = reshape.location
    moved = with_rows(producer, moved_reshape.output)
    if moved is None:
        return False
    rewriter.replace(reshape, [moved_reshape, moved])
    rewriter.erase(producer)
    return True


class MeetTheResidual(RewritePattern):
    """gemm (-> bias -> activation) -> reshape -> add becomes reshape -> gemm -> add, the
    reshape keeping the last axis: the GEMM's result then meets the add that fuse-epilogue takes as its residual
    (at batch 1 the exporter's sequence-first transposes are reshapes, and the residual
    add runs on [S, 1, E]). The same for an activation after the reshape: torch.export
    writes `nn.Linear` on 3-D input as a 2-D addmm and a `view` back, so BERT's GELU
    would otherwise stay a launch of its own."""

    def __init__(self, owner: ModulePass):
        self.owner = owner

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ops.ReshapeOp, rewriter: PatternRewriter) -> None:
        user = sole_user(op.output)
        residual_add = isinstance(user, ops.BinaryOp) and user.fn.data in ("add", "mul") and user.lhs is not user.rhs
        activation = isinstance(user, ops.UnaryOp) and user.fn.data in ops.ACTIVATION_ARITY and user.fn.data != "none"
        if (residual_add or activation) and keeps_last_axis(op) and computed_by_gemm(op.input) and hoist_reshape(op, rewriter):
            statistics.count(self.owner, "reshapes moved up")


class ComposeReshapes(RewritePattern):
    """reshape(reshape(x)) -> reshape(x), and a reshape to x's own shape -> x: the chains
    of views torch.export writes (a `view` to 2-D before each addmm and back to 3-D after
    it), and those the moves above leave, read as one reshape or none."""

    def __init__(self, owner: ModulePass):
        self.owner = owner

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ops.ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner if isinstance(op.input.owner, ops.ReshapeOp) else None
        source = inner.input if inner is not None else op.input
        if source.type == op.output.type:
            rewriter.replace_matched_op([], [source])
            statistics.count(self.owner, "reshapes removed")
        elif inner is not None:
            composed = ops.ReshapeOp(source, tensor_shape(op.output.type))
            composed.location = op.location
            rewriter.replace_matched_op(composed)
            statistics.count(self.owner, "reshapes composed")
        else:
            return
        if inner is not None and inner.parent is not None and not inner.output.uses:
            rewriter.erase_op(inner)


def computed_by_gemm(value: SSAValue) -> bool:
    """Whether `value` is a GEMM's result, through row-wise ops (its bias, its activation)
    whose results are used once."""
    while not isinstance(value.owner, ops.GemmOp):
        rows = row_operand(value.owner) if isinstance(value.owner, Operation) else None
        if rows is None or sole_user(value) is None:
            return False
        value = rows
    return row_operand(value.owner) is not None


@dataclass(frozen=True)
class CommuteTransposesPass(ModulePass):
    """Requires: op-level IR before fuse-epilogue. Guarantees: leading transposes moved
    across row-wise ops to where data movement is, composed where they meet; same
    function."""

    name = "commute-transposes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([CommuteTransposes(self), MeetTheResidual(self), ComposeReshapes(self)])
        PatternRewriteWalker(patterns, apply_recursively=True).rewrite_module(op)
