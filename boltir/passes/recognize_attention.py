"""recognize-attention: scaled dot-product attention, as exporters write it, becomes one
`graph.attention`.

The pass starts from each `graph.softmax` over the last axis of a 4-D tensor and reads

    P = softmax(S);  out = P @ V,   S = mask(scale · (Q @ Kᵀ))

in the forms exporters write:

- the product `Q @ Kᵀ` is a 4-D `graph.matmul`, or a 3-D one between [B·H, S, D]
  reshapes of 4-D values whose result is reshaped back (torch.export's decomposition of
  `scaled_dot_product_attention`, through `bmm`); the same holds for `P @ V`;
- Kᵀ is any chain of transposes of K (torch.onnx writes one Transpose(0, 2, 3, 1) of the
  [B, S, H, D] reshape); the transposes become the one that gives K as [B, H, Sk, D];
- the scale is any product of `Mul` or `Div` by scalar constants, on the scores or on Q
  or K before the product (sqrt(sqrt(d)) on both, as torch.export's decomposition and
  some exporters write it); no scale is a scale of 1;
- masks between the scale and the softmax: `Add` of a tensor (BERT's [B, 1, 1, S]
  `(1 - mask) · min`, a [B, 1, S, S] bias), and `Where(cond, S, fill)` or
  `Where(cond, fill, S)` with a scalar fill of at most `MASKED_SCORE` (GPT-2's causal
  `Where` with finfo.min, `masked_fill`), which becomes a boolean mask (true = attend);
- a constant mask that masks nothing (an additive one of zeros, a boolean one true
  everywhere: BERT exported without an attention mask) is dropped, so the kernel reads
  no bias;
- a mask that is a constant triangle (`Where` on tril, or an additive constant that is 0
  on and below the diagonal and at most `MASKED_SCORE` above it) becomes `causal`;
- after the softmax, torch.export's "safe softmax" `Where(all keys masked, 0, P)` is
  what `graph.attention` does anyway, and is taken in.

Several additive masks are added into one; boolean masks are combined with `And`; both
kinds at once become one additive mask (`Where(boolean, additive, -inf)`).

A finite `Where` fill differs from -inf only in a query row whose keys are all masked,
which `graph.attention` answers with zeros and the exported graph with an average of V;
exporters write such fills for causal and padding masks, where no row is all masked.

Requires: graph-level IR, after fold-constants (the triangles and scales must be
constants to be read). Guarantees: every attention matched is one `graph.attention`
(q, k, v as [B, H, S, D]); the ops that only fed it are gone; the module computes the
same function (up to the fully masked rows above).

Statistics: "attentions recognized", "causal masks recognized", "masks that mask nothing
dropped", and a note for each
softmax that looks like attention but is left alone, with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dialects.graph import tensor_shape
from boltir.dialects.shapes import broadcasts_to
from boltir.dtypes import numpy_dtype
from boltir.passes import statistics
from boltir.passes.common import NoteOnce, constant_of, new_constant, where

MASKED_SCORE = -1e4
"""A `Where` fill (or an additive constant) at or below this masks the score."""
MAX_SCORE_OPS = 12
"""Most ops read between the product and the softmax."""
SWAP_LAST = (0, 1, 3, 2)


# ------------------------------------------------------------------------ reading


def scalar_of(value: SSAValue) -> float | None:
    """The value of a one-element float constant, else None."""
    try:
        array = constant_of(value)
    except BoltError:  # a weight printed without its data
        return None
    if array is None or array.size != 1 or array.dtype.kind != "f":
        return None
    return float(array.reshape(-1)[0])


def scale_step(value: SSAValue) -> tuple[SSAValue, float] | None:
    """(x, c) when `value` is `x * c` or `x / c` for a scalar constant c, keeping x's type."""
    op = value.owner
    if isinstance(op, graph.MulOp):
        for x, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            factor = scalar_of(c)
            if factor is not None and x.type == value.type:
                return x, factor
    if isinstance(op, graph.DivOp) and op.lhs.type == value.type:
        divisor = scalar_of(op.rhs)
        if divisor:
            return op.lhs, 1.0 / divisor
    return None


def strip(value: SSAValue) -> tuple[SSAValue, tuple[int, ...], float]:
    """(x, perm, factor) with `value = factor * transpose(x, perm)`, reading through
    transposes and scalar scales."""
    perm = tuple(range(value.type.get_num_dims()))
    factor = 1.0
    while True:
        if isinstance(value.owner, graph.TransposeOp):
            inner = value.owner.prop_value("perm")
            perm = tuple(inner[p] for p in perm)
            value = value.owner.input
        elif (step := scale_step(value)) is not None:
            value, by = step
            factor *= by
        else:
            return value, perm, factor


def unbatched(value: SSAValue) -> SSAValue | None:
    """The 4-D [B, H, X, Y] value that `value`, a [B·H, X, Y] reshape, reads."""
    op = value.owner
    if not isinstance(op, graph.ReshapeOp) or op.input.type.get_num_dims() != 4:
        return None
    b, h, x, y = tensor_shape(op.input.type)
    return op.input if tensor_shape(value.type) == (b * h, x, y) else None


def product_operands(value: SSAValue) -> tuple[SSAValue, SSAValue] | None:
    """(A, B) of a 4-D product `value = A @ B`: a 4-D matmul, or a 3-D one of [B·H, ...]
    reshapes reshaped back to 4-D."""
    op = value.owner
    if isinstance(op, graph.MatMulOp):
        if all(v.type.get_num_dims() == 4 for v in (op.lhs, op.rhs, op.output)):
            return op.lhs, op.rhs
        return None
    if isinstance(op, graph.ReshapeOp) and isinstance(op.input.owner, graph.MatMulOp) and value.type.get_num_dims() == 4:
        matmul = op.input.owner
        lhs, rhs = unbatched(matmul.lhs), unbatched(matmul.rhs)
        if lhs is None or rhs is None or matmul.output.type.get_num_dims() != 3:
            return None
        if tensor_shape(lhs.type)[:2] == tensor_shape(rhs.type)[:2] == tensor_shape(value.type)[:2]:
            return lhs, rhs
    return None


@dataclass
class Scores:
    """What lies between `Q @ Kᵀ` and the softmax."""

    q: SSAValue
    kt: SSAValue
    scale: float = 1.0
    additive: list[SSAValue] = field(default_factory=list)
    boolean: list[tuple[SSAValue, bool]] = field(default_factory=list)
    """(condition, negated): the mask is `condition` (true = attend), or its negation."""


def read_scores(value: SSAValue, depth: int = 0) -> Scores | None:
    """The scores' parts, reading down from the softmax's input; None if it is not one."""
    if depth > MAX_SCORE_OPS:
        return None
    if (product := product_operands(value)) is not None:
        return Scores(*product)
    op = value.owner
    if (step := scale_step(value)) is not None:
        scores = read_scores(step[0], depth + 1)
        if scores is None or scores.additive or scores.boolean:
            return None  # a scale of the masked scores would scale the mask too
        scores.scale *= step[1]
        return scores
    if isinstance(op, graph.AddOp):
        for inner, mask in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if inner.type == value.type and (scores := read_scores(inner, depth + 1)) is not None:
                scores.additive.append(mask)
                return scores
    if isinstance(op, graph.WhereOp):
        for inner, fill, negated in ((op.true_value, op.false_value, False), (op.false_value, op.true_value, True)):
            level = scalar_of(fill)
            if inner.type == value.type and level is not None and level <= MASKED_SCORE:
                if (scores := read_scores(inner, depth + 1)) is not None:
                    scores.boolean.append((op.condition, negated))
                    return scores
    return None


def is_safe_softmax_guard(op: graph.WhereOp, scores: SSAValue, probabilities: SSAValue) -> bool:
    """`Where(not(any(not(S == -inf), -1)), 0, P)`: torch's softmax that gives zeros for a
    row whose keys are all masked."""
    if op.false_value != probabilities or not _zeros(op.true_value):
        return False
    outer = op.condition.owner
    if not isinstance(outer, graph.NotOp) or not isinstance(any_op := outer.input.owner, graph.ReduceMaxOp):
        return False
    rank = scores.type.get_num_dims()
    if tuple(a % rank for a in any_op.prop_value("axes")) != (rank - 1,):
        return False
    inner = any_op.input.owner
    if not isinstance(inner, graph.NotOp) or not isinstance(equal := inner.input.owner, graph.EqualOp):
        return False
    operands = (equal.lhs, equal.rhs)
    return scores in operands and any(scalar_of(v) == -math.inf for v in operands)


def _zeros(value: SSAValue) -> bool:
    try:
        array = constant_of(value)
    except BoltError:
        return False
    return array is not None and array.size > 0 and not np.any(array)


def only_user(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def read_probabilities(softmax: graph.SoftmaxOp) -> tuple[SSAValue, SSAValue] | None:
    """(V, the 4-D result of P @ V) for the softmax's probabilities P."""
    p = softmax.output
    user = only_user(p)
    if isinstance(user, graph.WhereOp) and is_safe_softmax_guard(user, softmax.input, p):
        p = user.output
        user = only_user(p)
    if isinstance(user, graph.MatMulOp) and user.lhs == p and product_operands(user.output) is not None:
        return user.rhs, user.output
    if isinstance(user, graph.ReshapeOp) and isinstance(matmul := only_user(user.output), graph.MatMulOp):
        back = only_user(matmul.output)
        if matmul.lhs == user.output and isinstance(back, graph.ReshapeOp):
            operands = product_operands(back.output)
            if operands is not None and operands[0] == p:
                return operands[1], back.output
    return None


# ------------------------------------------------------------------------ masks


def triangle(shape: tuple[int, ...]) -> np.ndarray:
    """The causal pattern over the last two axes: key j is seen by query i when j <= i."""
    sq, sk = shape[-2:]
    return np.tril(np.ones((sq, sk), dtype=bool))


def constant_values(value: SSAValue) -> np.ndarray | None:
    try:
        return constant_of(value)
    except BoltError:
        return None


def is_causal_boolean(condition: SSAValue, negated: bool, scores_shape: tuple[int, ...]) -> bool:
    array = constant_values(condition)
    if array is None or array.dtype != np.bool_:
        return False
    try:
        full = np.broadcast_to(array, scores_shape)
    except ValueError:
        return False
    return bool(np.all((~full if negated else full) == triangle(scores_shape)))


def masks_nothing(mask: SSAValue, negated: bool | None, scores_shape: tuple[int, ...]) -> bool:
    """Whether a constant mask leaves every score as it is: an additive one of zeros, a
    boolean one true everywhere (after its negation; `negated` None for additive). BERT
    exported without an attention mask adds a folded `(1 - ones) · min`, all zeros."""
    array = constant_values(mask)
    if array is None or not broadcasts_to(array.shape, scores_shape):
        return False
    if negated is None:
        return array.dtype.kind == "f" and not np.any(array)
    return array.dtype == np.bool_ and bool(np.all(~array if negated else array))


def is_causal_additive(mask: SSAValue, scores_shape: tuple[int, ...]) -> bool:
    array = constant_values(mask)
    if array is None or array.dtype.kind != "f" or array.ndim < 2 or array.shape[-2:] != scores_shape[-2:]:
        return False
    seen = triangle(scores_shape)
    values = array.astype(np.float64)
    return bool(np.all(values[..., seen] == 0) and np.all(values[..., ~seen] <= MASKED_SCORE))


@dataclass
class MaskBuilder:
    """Builds the one mask operand, ops in order before the attention."""

    location: object
    new_ops: list[Operation] = field(default_factory=list)

    def add(self, op: Operation) -> SSAValue:
        op.location = self.location
        self.new_ops.append(op)
        return op.results[0]

    def combine(self, additive: list[SSAValue], boolean: list[tuple[SSAValue, bool]]) -> SSAValue | None:
        bool_mask = None
        for condition, negated in boolean:
            value = self.add(graph.NotOp(condition)) if negated else condition
            bool_mask = value if bool_mask is None else self.add(graph.AndOp(bool_mask, value))
        add_mask = None
        for mask in additive:
            add_mask = mask if add_mask is None else self.add(graph.AddOp(add_mask, mask))
        if bool_mask is None or add_mask is None:
            return add_mask if bool_mask is None else bool_mask
        element = numpy_dtype(add_mask.type.element_type)
        minus_inf = self.add(new_constant("attention.masked", np.array(-np.inf, dtype=element), self.location))
        return self.add(graph.WhereOp(bool_mask, add_mask, minus_inf))


# ------------------------------------------------------------------------ rewriting


def permuted(builder: MaskBuilder, value: SSAValue, perm: tuple[int, ...]) -> SSAValue:
    if perm == tuple(range(len(perm))):
        return value
    return builder.add(graph.TransposeOp(value, perm))


class RecognizeAttention(RewritePattern):
    def __init__(self, owner: ModulePass):
        self.owner = owner
        self.note = NoteOnce(owner)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.SoftmaxOp, rewriter: PatternRewriter) -> None:
        rank = op.input.type.get_num_dims()
        if rank != 4 or op.prop_value("axis") % rank != rank - 1:
            return
        probabilities = read_probabilities(op)
        scores = read_scores(op.input) if probabilities is not None else None
        if probabilities is None or scores is None:
            return
        v, result = probabilities
        builder = MaskBuilder(op.location)
        q, q_perm, q_factor = strip(scores.q)
        k, kt_perm, k_factor = strip(scores.kt)
        shape = tuple(tensor_shape(op.input.type))
        kept_additive = [m for m in scores.additive if not masks_nothing(m, None, shape)]
        kept_boolean = [entry for entry in scores.boolean if not masks_nothing(*entry, shape)]
        dropped = len(scores.additive) + len(scores.boolean) - len(kept_additive) - len(kept_boolean)
        scores.additive, scores.boolean = kept_additive, kept_boolean
        causal = False
        for entry in list(scores.boolean):
            if not causal and is_causal_boolean(*entry, shape):
                scores.boolean.remove(entry)
                causal = True
        for mask in list(scores.additive):
            if not causal and is_causal_additive(mask, shape):
                scores.additive.remove(mask)
                causal = True
        if not self.masks_fit(op, scores, shape):
            return
        mask = builder.combine(scores.additive, scores.boolean)
        q_value = permuted(builder, q, q_perm)
        k_value = permuted(builder, k, tuple(kt_perm[p] for p in SWAP_LAST))
        scale = scores.scale * q_factor * k_factor
        attention = graph.AttentionOp(q_value, k_value, v, mask, scale=scale, causal=causal)
        builder.add(attention)
        rewriter.insert(builder.new_ops, InsertPoint.before(result.owner))
        rewriter.replace_all_uses_with(result, attention.output)
        statistics.count(self.owner, "attentions recognized")
        if causal:
            statistics.count(self.owner, "causal masks recognized")
        if dropped:
            statistics.count(self.owner, "masks that mask nothing dropped", dropped)

    def masks_fit(self, op: graph.SoftmaxOp, scores: Scores, shape: tuple[int, ...]) -> bool:
        for mask in [*scores.additive, *(c for c, _ in scores.boolean)]:
            if not broadcasts_to(tensor_shape(mask.type), shape):
                self.note(op, f"left {where(op)} alone: its mask {mask.type} does not broadcast to the scores")
                return False
        return True


@dataclass(frozen=True)
class RecognizeAttentionPass(ModulePass):
    """Requires: graph-level IR, constants folded. Guarantees: every scaled dot-product
    attention in the forms above is one `graph.attention`; the module computes the same
    function."""

    name = "recognize-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([RecognizeAttention(self)])).rewrite_module(op)
