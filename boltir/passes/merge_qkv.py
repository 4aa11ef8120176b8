"""merge-qkv: the q, k and v projections of an attention become one GEMM whose output the
attention reads packed ("BS3HD").

An `op.attention` in layout "BSHD" whose q, k and v are [B, S, H, D] reshapes of

- three `op.gemm`s of one A with constant weights, equal layouts and equal epilogues
  without a residual (a bias and an activation act per column, so they join too), used
  by nothing else: they become one GEMM
  whose weight (and bias) are the three joined along N at compile time, in the order q,
  k, v;
- or three slices [0, N), [N, 2N), [2N, 3N) along the last axis of one tensor (GPT-2's
  `c_attn` split): that tensor is read as it is;

then reads the [..., 3·H·D] result reshaped to [B, S, 3, H, D], with layout "BS3HD".
Three GEMM launches become one, over three times the N, and no head is moved in memory.

Requires: op-level IR after fuse-epilogue (the biases in the GEMMs' epilogues).
Guarantees: each such attention reads one packed projection; the module computes the
same function (the joined weights are the same numbers).

Statistics: "projections merged" (three GEMMs into one), "packed splits read" (three
slices of one tensor), and a note for each "BSHD" attention left alone, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

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

from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape
from boltir.passes import statistics
from boltir.passes.common import NoteOnce, constant_of, erase_unused_producers, name_base, where
from boltir.weights import make_weight_attr


def sole_use(value: SSAValue, user: Operation) -> bool:
    return all(use.operation is user for use in value.uses)


def reshaped_sources(attention: ops.AttentionOp) -> list[SSAValue] | None:
    """What q, k and v's reshapes read, when each is a reshape that only the attention uses."""
    sources = []
    for value in (attention.q, attention.k, attention.v):
        if not isinstance(value.owner, ops.ReshapeOp) or not sole_use(value, attention):
            return None
        sources.append(value.owner.input)
    return sources


def weights_of(gemm: ops.GemmOp) -> tuple[np.ndarray, np.ndarray | None] | None:
    try:
        weight, bias = constant_of(gemm.b), constant_of(gemm.bias)
    except BoltError:  # weights printed without their data
        return None
    if weight is None or weight.ndim != 2 or (gemm.bias is not None and bias is None):
        return None
    return weight, bias


def projections(sources: list[SSAValue]) -> list[ops.GemmOp] | str:
    """The three GEMMs, or why they do not merge."""
    gemms = [value.owner for value in sources]
    if not all(isinstance(g, ops.GemmOp) for g in gemms):
        return "q, k and v are not all GEMM results"
    if any(len(list(value.uses)) != 1 for value in sources):
        return "a projection has other users"
    first = gemms[0]
    for gemm in gemms[1:]:
        same = gemm.a == first.a and gemm.output.type == first.output.type and gemm.b.type == first.b.type
        for name in ("layout_a", "layout_b", "epilogue"):
            same = same and gemm.prop_value(name) == first.prop_value(name)
        if not same:
            return "the projections differ in input, shape, layout or epilogue"
    if first.residual is not None:
        return "the projections' epilogues add a residual"
    if any(weights_of(g) is None for g in gemms):
        return "the projections' weights are not constants"
    return gemms


def packed_split(sources: list[SSAValue]) -> SSAValue | None:
    """x when q, k and v's sources are x[..., 0:N], x[..., N:2N], x[..., 2N:3N]."""
    slices = [value.owner for value in sources]
    if not all(isinstance(s, ops.SliceOp) for s in slices) or len({s.input for s in slices}) != 1:
        return None
    x = slices[0].input
    rank = x.type.get_num_dims()
    n = tensor_shape(x.type)[-1] // 3
    for index, piece in enumerate(slices):
        axes = tuple(a % rank for a in piece.prop_value("axes"))
        if axes != (rank - 1,) or piece.prop_value("steps") != (1,):
            return None
        if (piece.prop_value("starts"), piece.prop_value("ends")) != ((index * n,), ((index + 1) * n,)):
            return None
    return x if tensor_shape(x.type)[-1] == 3 * n else None


class MergeQkv(RewritePattern):
    def __init__(self, owner: ModulePass):
        self.owner = owner
        self.note = NoteOnce(owner)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ops.AttentionOp, rewriter: PatternRewriter) -> None:
        if op.prop_value("layout") != "BSHD":
            return
        b, s, h, d = tensor_shape(op.q.type)
        if op.k.type != op.q.type or op.v.type != op.q.type:
            self.note(op, f"left {where(op)} alone: q, k and v differ in shape")
            return
        sources = reshaped_sources(op)
        if sources is None:
            self.note(op, f"left {where(op)} alone: q, k and v are not reshapes used only by it")
            return
        packed = packed_split(sources)
        new_ops: list[Operation] = []
        if packed is not None:
            statistics.count(self.owner, "packed splits read")
        else:
            gemms = projections(sources)
            if isinstance(gemms, str):
                self.note(op, f"left {where(op)} alone: {gemms}")
                return
            merged = merged_gemm(gemms)
            new_ops += merged
            packed = merged[-1].results[0]
            statistics.count(self.owner, "projections merged")
        reshape = ops.ReshapeOp(packed, (b, s, 3, h, d))
        attention = ops.AttentionOp(
            reshape.output, bias=op.bias, key_lengths=op.key_lengths, layout="BS3HD",
            scale=op.prop_value("scale"), causal=op.prop_value("causal"),
        )
        for new in (*new_ops, reshape, attention):
            new.location = op.location
        old = [value.owner for value in (op.q, op.k, op.v)]
        rewriter.replace(op, [*new_ops, reshape, attention], [attention.output])
        erase_dead(rewriter, old)


def merged_gemm(gemms: list[ops.GemmOp]) -> list[Operation]:
    """The joined weight (and bias) constants and the one GEMM, in order."""
    first = gemms[0]
    weights = [weights_of(g) for g in gemms]
    axis = 1 if first.prop_value("layout_b") == "row" else 0  # N is B's columns, or its rows ("col")
    name = name_base(first.b, "attention")
    weight = ops.ConstantOp(make_weight_attr(f"{name}.qkv_weight", np.concatenate([w for w, _ in weights], axis=axis)))
    new_ops: list[Operation] = [weight]
    bias = None
    if first.bias is not None:
        bias = ops.ConstantOp(make_weight_attr(f"{name}.qkv_bias", np.concatenate([c for _, c in weights], axis=-1)))
        new_ops.append(bias)
    gemm = ops.GemmOp(
        first.a, weight.output, bias=bias.output if bias is not None else None, layout_a=first.prop_value("layout_a"),
        layout_b=first.prop_value("layout_b"), epilogue=first.epilogue,
    )
    new_ops.append(gemm)
    return new_ops


def erase_dead(rewriter: PatternRewriter, ops_: list[Operation]) -> None:
    """Erases the old reshapes, then what fed only them (GEMMs, slices, their constants)."""
    for op in ops_:
        if op.parent is None or any(result.uses for result in op.results):
            continue
        producers = [value.owner for value in op.operands if isinstance(value.owner, Operation)]
        rewriter.erase(op)
        for producer in producers:
            if isinstance(producer, ops.GemmOp | ops.SliceOp) and producer.parent is not None and not producer.output.uses:
                operands = list(producer.operands)
                rewriter.erase(producer)
                erase_unused_producers(rewriter, operands)


@dataclass(frozen=True)
class MergeQkvPass(ModulePass):
    """Requires: op-level IR, epilogues fused. Guarantees: an attention whose q, k and v
    are projections of one input reads them from one GEMM ("BS3HD"); same function."""

    name = "merge-qkv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([MergeQkv(self)])).rewrite_module(op)
