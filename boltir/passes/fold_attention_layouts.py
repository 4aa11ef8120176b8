"""fold-attention-layouts: an attention reads its q, k and v where a projection wrote
them, and writes its result where the next op reads it, instead of through copies.

Exporters reach q, k and v through chains of pure data movement: reshapes, transposes,
gathers of a constant index, slices (torch.onnx's `nn.MultiheadAttention` unpacks its
packed projection with a transpose and three gathers, then moves each head to the
front). Each such chain from a tensor Y to q is a strided view of Y, or no view at all
(`boltir.passes.strided_views` works out which, exactly, from the shapes alone). Where
q[b, h, s, d], k and v are Y's elements in one of `op.attention`'s layouts:

- "BS3HD": one Y, read as [B, S, 3, H, D] (q, k, v at index 0, 1, 2);
- "BSHD": each of q, k and v a tensor read as [B, S, H, D];
- "BHSD": each a tensor read as [B, H, S, D];

the attention reads the reshaped Y (a reshape moves no data) in that layout, and the
chain's ops that fed only it go. On the result side, a chain of transposes and reshapes
that only reorders the result into the other head order ([B, S, H, D] instead of [B, H,
S, D], or back) is the attention's result in the other layout, reshaped.

Of the layouts whose inputs fit, the pass takes the one that leaves the fewest copies
(transposes, gathers, slices) around the attention, counting a transpose it has to add
when the result's users need the old head order; BS3HD, then BSHD, then BHSD on a tie.
An attention is rewritten only when that removes copies, so the pass never undoes
itself.

Requires: op-level IR. Guarantees: the same function; each attention's operands and
result reach their producers and users through reshapes only where a layout allows it.
merge-qkv then joins three projections read "BSHD" into one GEMM.

Statistics: "attentions read through views", "copies removed"; a note for each
attention left behind copies, with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape
from boltir.passes import statistics
from boltir.passes.common import NoteOnce, where
from boltir.passes.strided_views import View, is_view_op, view_of_chain

PREFERENCE = ("BS3HD", "BSHD", "BHSD")
SWAP_HEADS = (0, 2, 1, 3)
"""[B, H, S, D] <-> [B, S, H, D]."""


def heads_first(layout: str) -> bool:
    return layout == "BHSD"


# ----------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Source:
    """One way to read an operand: `root`, and the view of the operand's [B, H, S, D]
    over it through `chain`."""

    root: SSAValue
    chain: tuple[Operation, ...]
    view: View


def logical(view: View, layout: str, index: int) -> View:
    """The [B, H, S, D] view of q (index 0), k (1) or v (2) from its operand's view."""
    if layout == "BS3HD":
        return view.select(2, index).permute(SWAP_HEADS)
    return view.permute(SWAP_HEADS) if layout == "BSHD" else view


def sources(attention: ops.AttentionOp, index: int) -> list[Source]:
    """Every root an operand can be read from, nearest first: the operand itself, then
    each value up its chain of view ops that the operand is a strided view of."""
    layout = attention.prop_value("layout")
    value = attention.q if layout == "BS3HD" else (attention.q, attention.k, attention.v)[index]
    chain: list[Operation] = []
    found = []
    while True:
        view = view_of_chain(tensor_shape(value.type), chain)
        if view is not None:
            found.append(Source(value, tuple(chain), logical(view, layout, index)))
        if not is_view_op(value.owner):
            return found
        chain.insert(0, value.owner)
        value = value.owner.operands[0]


def expected_view(root: SSAValue, layout: str, heads: tuple[int, int, int, int], index: int) -> View | None:
    """q, k or v's [B, H, S, D] view over `root` read in `layout`, or None where the
    sizes do not allow it."""
    b, h, s, d = heads
    count = math.prod(tensor_shape(root.type))
    base = View.contiguous(tensor_shape(root.type))
    if layout == "BS3HD":
        return base.reshape((b, s, 3, h, d)).select(2, index).permute(SWAP_HEADS) if count == b * s * 3 * h * d else None
    if count != b * h * s * d:
        return None
    return base.reshape((b, s, h, d)).permute(SWAP_HEADS) if layout == "BSHD" else base.reshape((b, h, s, d))


def fitting_roots(attention: ops.AttentionOp, layout: str, candidates: list[list[Source]]) -> list[Source] | None:
    """For each of q, k and v the farthest source read in `layout`, or None."""
    heads = attention.head_shapes()
    if layout == "BS3HD":
        if len(set(heads)) != 1:
            return None
        for source in reversed(candidates[0]):  # one root for all three
            picked = [next((c for c in candidates[i] if c.root is source.root), None) for i in range(3)]
            if all(p is not None and p.view.same_as(expected_view(p.root, layout, heads[i], i)) for i, p in enumerate(picked)):
                return picked
        return None
    picked = []
    for index in range(3):
        fits = [c for c in candidates[index] if c.view.same_as(expected_view(c.root, layout, heads[index], index))]
        if not fits:
            return None
        picked.append(fits[-1])
    return picked


def copies_removed(attention: ops.AttentionOp, chains: list[tuple[Operation, ...]]) -> int:
    """The copies (data movement other than reshapes) in `chains` that nothing but the
    attention and each other uses."""
    dying = {op for chain in chains for op in chain}
    changed = True
    while changed:
        changed = False
        for op in list(dying):
            if any(use.operation not in dying and use.operation is not attention for r in op.results for use in r.uses):
                dying.discard(op)
                changed = True
    return sum(1 for op in dying if not isinstance(op, ops.ReshapeOp))


# ----------------------------------------------------------------------- result


def result_chain(attention: ops.AttentionOp) -> list[Operation]:
    """The transposes and reshapes that follow the result, each result used once."""
    chain: list[Operation] = []
    value = attention.output
    while len(uses := list(value.uses)) == 1 and isinstance(uses[0].operation, ops.LayoutTransformOp | ops.ReshapeOp):
        chain.append(uses[0].operation)
        value = chain[-1].results[0]
    return chain


def result_reach(attention: ops.AttentionOp, layout: str, chain: list[Operation]) -> int | None:
    """How many ops of `chain` the result in `layout`, reshaped, replaces (the farthest
    that are a reshape of it); None where not even the result itself is."""
    shape = tensor_shape(attention.output.type)
    written = View.contiguous(shape)
    if heads_first(layout) != heads_first(attention.prop_value("layout")):
        written = written.permute(SWAP_HEADS)
    for length in range(len(chain), -1, -1):
        end = chain[length - 1].results[0] if length else attention.output
        reached = view_of_chain(shape, chain[:length])
        if reached is not None and reached.same_as(written.reshape(tensor_shape(end.type))):
            return length
    return None


# ---------------------------------------------------------------------- rewrite


@dataclass
class Plan:
    layout: str
    roots: list[Source]
    reach: int | None
    gain: int


@dataclass
class FoldAttentionLayouts(RewritePattern):
    owner: ModulePass
    note: NoteOnce = field(init=False)

    def __post_init__(self):
        self.note = NoteOnce(self.owner)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ops.AttentionOp, rewriter: PatternRewriter) -> None:
        candidates = [sources(op, index) for index in range(3)]
        chain = result_chain(op)
        plans = []
        for layout in PREFERENCE:
            roots = fitting_roots(op, layout, candidates)
            if roots is None:
                continue
            reach = result_reach(op, layout, chain)
            gain = copies_removed(op, [r.chain for r in roots])
            gain += sum(1 for o in chain[:reach] if not isinstance(o, ops.ReshapeOp)) if reach else 0
            plans.append(Plan(layout, roots, reach, gain - (reach is None)))
        best = max(plans, key=lambda plan: plan.gain, default=None)  # the first of the best: PREFERENCE
        if best is None or best.gain <= 0:
            if any(not isinstance(o, ops.ReshapeOp) for c in candidates for o in c[-1].chain):
                self.note(op, f"left {where(op)} behind copies: its q, k and v are no view of one layout that removes them")
            return
        rewrite(op, best, chain, rewriter)
        statistics.count(self.owner, "attentions read through views")
        statistics.count(self.owner, "copies removed", best.gain)


def reshaped(value: SSAValue, shape: tuple[int, ...], new_ops: list[Operation]) -> SSAValue:
    if tensor_shape(value.type) == tuple(shape):
        return value
    reshape = ops.ReshapeOp(value, shape)
    new_ops.append(reshape)
    return reshape.output


def rewrite(op: ops.AttentionOp, plan: Plan, chain: list[Operation], rewriter: PatternRewriter) -> None:
    new_ops: list[Operation] = []
    heads = op.head_shapes()
    if plan.layout == "BS3HD":
        b, h, s, d = heads[0]
        operands = [reshaped(plan.roots[0].root, (b, s, 3, h, d), new_ops), None, None]
    else:
        operands = []
        for (b, h, s, d), source in zip(heads, plan.roots, strict=True):
            operands.append(reshaped(source.root, (b, h, s, d) if plan.layout == "BHSD" else (b, s, h, d), new_ops))
    attention = ops.AttentionOp(
        *operands, bias=op.bias, key_lengths=op.key_lengths, layout=plan.layout,
        scale=op.prop_value("scale"), causal=op.prop_value("causal"),
    )
    attention.output.name_hint = op.output.name_hint
    new_ops.append(attention)
    replaced, result = op.output, attention.output
    if plan.reach:
        replaced = chain[plan.reach - 1].results[0]
        result = reshaped(result, tensor_shape(replaced.type), new_ops)
    elif plan.reach is None:
        transpose = ops.LayoutTransformOp(result, SWAP_HEADS)
        new_ops.append(transpose)
        result = transpose.output
    for new in new_ops:
        new.location = op.location
    rewriter.insert_op(new_ops)
    rewriter.replace_all_uses_with(replaced, result)
    for dead in [*reversed(chain[: plan.reach or 0]), op]:
        rewriter.erase(dead)
    erase_dead_chains(rewriter, [source.chain for source in plan.roots])


def erase_dead_chains(rewriter: PatternRewriter, chains: list[tuple[Operation, ...]]) -> None:
    """Erases the chains' ops nothing uses any more, last first, and the constant
    indices of the gathers among them."""
    for op in sorted({op for chain in chains for op in chain}, key=lambda o: -o.parent.get_operation_index(o) if o.parent else 0):
        if op.parent is None or any(r.uses for r in op.results):
            continue
        operands = list(op.operands[1:])
        rewriter.erase(op)
        for value in operands:
            if isinstance(value.owner, ops.ConstantOp) and not value.uses and value.owner.parent is not None:
                rewriter.erase(value.owner)


@dataclass(frozen=True)
class FoldAttentionLayoutsPass(ModulePass):
    """Requires: op-level IR. Guarantees: attentions read their operands and write their
    result through reshapes where a layout allows it; same function."""

    name = "fold-attention-layouts"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldAttentionLayouts(self), apply_recursively=True).rewrite_module(op)
