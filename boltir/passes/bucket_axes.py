"""Which axes of each value carry a bucketed input dimension, and the proof that padding
that dimension is safe: the analysis a bucketed build runs on each bucket's graph-level
module (after the graph-level passes, before lower-graph-to-op).

A bucketed build runs a call of size n on the bucket of size b >= n, its inputs padded
with zeros from n to b along the bucketed axis, and slices the outputs back. That is
exact when no op combines positions along that axis: then position i < n of every value
depends only on positions i < n... of the inputs, i.e. rows are independent. The analysis
follows each bucketed input axis ("symbol") through the ops, forward:

- elementwise ops, casts, `where`, `expand`, inference batch norm: broadcasting keeps the
  axis (aligned from the right);
- reshapes, flatten, squeeze, unsqueeze: the axis survives where it stays a dimension of
  its own (the same extent, the same number of elements before it), transposes permute it;
- slices, pads, concats, splits, resizes, space-to-depth: the axis must keep its extent
  (they may act on other axes);
- convs and pools: only the batch axis; pools keep the channels too;
- matmul and gemm: the rows of the left operand and the columns of the right one, and
  batch dimensions; never the contracted axis;
- softmax, layer norm and reductions: any axis they do not normalize or reduce over;
- cumsum: every axis when it sums forward (position i reads positions <= i only, never
  the padding after n); reversed, any axis but the one it sums along;
- gather: the data's other axes and every axis of the indices;
- attention: batch, heads and queries; the keys' sequence axis too, because a padded key
  is masked by `op.attention`'s key_lengths (mask-padded-keys) and its value is then
  never read.

Anything else (an op that combines positions of the axis, such as a mean over tokens, a
softmax over the batch, a conv over a padded spatial axis, or an op with no rule) is
refused: one BoltError naming the op. The result says for each output which axes carry
which symbol (the runtime slices them), which attentions need their padded keys masked,
and why the model is safe, op family by op family.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, NameLoc
from xdsl.ir import Operation, SSAValue

from boltir.diagnostics import BoltError, format_location
from boltir.dialects import graph
from boltir.dialects.graph import tensor_shape
from boltir.ir import find_entry

Carried = dict[int, int]
"""axis -> symbol: the axes of one value that carry a bucketed dimension."""


class Mixes(Exception):
    """An op combines positions along a bucketed axis."""

    def __init__(self, symbol: int, why: str):
        super().__init__(why)
        self.symbol, self.why = symbol, why


@dataclass
class BucketAxes:
    outputs: list[Carried]
    """For each output of @main: its axes that carry a symbol."""
    padded_keys: list[tuple[int, int]] = field(default_factory=list)
    """(index among @main's graph.attention ops, symbol) of each attention whose keys'
    sequence axis carries a symbol: padded keys it must mask."""
    carried_by: Counter = field(default_factory=Counter)
    """op name -> how many ops of that name carried a symbol without mixing it."""

    def why(self) -> str:
        """Why padding is safe, in one sentence."""
        families = ", ".join(f"{name.removeprefix('graph.')} x{count}" for name, count in sorted(self.carried_by.items()))
        text = f"no op combines positions along a bucketed axis ({families or 'no op carries one'})"
        if self.padded_keys:
            text += f"; {len(self.padded_keys)} attention(s) mask the padded keys with key_lengths"
        return text


def describe_op(op: Operation) -> str:
    name = f"{op.name} '{op.location.desc.data}'" if isinstance(op.location, NameLoc) else op.name
    location = format_location(op.location)
    return f"{name} at {location}" if location else name


def _rank(value: SSAValue) -> int:
    return len(tensor_shape(value.type))


def _merge(into: Carried, axis: int, symbol: int) -> None:
    if into.get(axis, symbol) != symbol:
        raise Mixes(symbol, f"it joins two bucketed dimensions on its axis {axis}")
    into[axis] = symbol


def broadcast(operands: Sequence[Carried], ranks: Sequence[int], result_rank: int) -> Carried:
    """numpy broadcasting: each operand's axes aligned from the right."""
    result: Carried = {}
    for carried, rank in zip(operands, ranks, strict=True):
        for axis, symbol in carried.items():
            _merge(result, axis + result_rank - rank, symbol)
    return result


def reshaped(carried: Carried, before: Sequence[int], after: Sequence[int]) -> Carried:
    """Each carried axis where it stays a dimension of its own after a reshape."""
    result: Carried = {}
    for axis, symbol in carried.items():
        prefix = math.prod(before[:axis])
        target = next((j for j in range(len(after)) if math.prod(after[:j]) == prefix and after[j] == before[axis]), None)
        if target is None:
            raise Mixes(symbol, f"the reshape {list(before)} -> {list(after)} merges or splits bucketed axis {axis}")
        _merge(result, target, symbol)
    return result


def keep_axes(carried: Carried, before: Sequence[int], after: Sequence[int], mixed: Sequence[int] = ()) -> Carried:
    """Same-rank ops that keep a carried axis where they leave its extent alone."""
    for axis, symbol in carried.items():
        if axis in mixed or after[axis] != before[axis]:
            raise Mixes(symbol, f"it changes or combines the positions of bucketed axis {axis}")
    return dict(carried)


def only_axes(carried: Carried, allowed: Mapping[int, int], what: str) -> Carried:
    """The carried axes that appear in `allowed` (operand axis -> result axis); any other is mixed."""
    result: Carried = {}
    for axis, symbol in carried.items():
        if axis not in allowed:
            raise Mixes(symbol, f"it combines positions along its {what} axis {axis}, which is bucketed")
        _merge(result, allowed[axis], symbol)
    return result


def _normalized(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


class _Analysis:
    def __init__(self, module: ModuleOp, inputs: Mapping[int, Carried]):
        self.entry = find_entry(module)
        self.carried: dict[SSAValue, Carried] = {}
        for index, arg in enumerate(self.entry.body.block.args):
            if inputs.get(index):
                self.carried[arg] = dict(inputs[index])
        self.result = BucketAxes([])
        self.attention_index = 0

    def of(self, value: SSAValue | None) -> Carried:
        return self.carried.get(value, {}) if value is not None else {}

    def run(self, symbol_names: Sequence[str]) -> BucketAxes:
        for op in self.entry.body.block.ops:
            if isinstance(op, func.ReturnOp):
                self.result.outputs = [dict(self.of(v)) for v in op.operands]
                continue
            operands = [self.of(v) for v in op.operands]
            try:
                results = self.visit(op, operands)
            except Mixes as mixing:
                raise BoltError(f"{describe_op(op)} mixes the bucketed dimension {symbol_names[mixing.symbol]}: "
                                f"{mixing.why}; padding it would change the result, so this model cannot be bucketed "
                                "along it (give that dimension a fixed size)") from None
            if isinstance(op, graph.AttentionOp):
                self.attention_index += 1
            if any(results):
                self.result.carried_by[op.name] += 1
            for value, carried in zip(op.results, results, strict=True):
                if carried:
                    self.carried[value] = carried
        return self.result

    def visit(self, op: Operation, operands: list[Carried]) -> list[Carried]:
        if not any(operands):
            return [{} for _ in op.results]
        rule = RULES.get(type(op)) or next((r for base, r in BASE_RULES if isinstance(op, base)), None)
        if rule is None:
            symbol = next(iter(next(c for c in operands if c).values()))
            raise Mixes(symbol, "no rule says that it keeps positions apart")
        result = rule(self, op, operands)
        return result if isinstance(result, list) else [result]


# ------------------------------------------------------------------ the rules


def _elementwise(_, op, operands):
    return broadcast(operands, [_rank(v) for v in op.operands], _rank(op.results[0]))


def _batch_norm(_, op, operands):
    if any(operands[1:]):
        raise Mixes(next(iter(next(c for c in operands[1:] if c).values())), "its statistics are bucketed")
    return dict(operands[0])


def _reshape(_, op, operands):
    return reshaped(operands[0], tensor_shape(op.operands[0].type), tensor_shape(op.results[0].type))


def _transpose(_, op, operands):
    perm = [int(p) for p in op.perm.get_values()]
    return {result_axis: operands[0][axis] for result_axis, axis in enumerate(perm) if axis in operands[0]}


def _same_extent(_, op, operands):
    """Slices, pads, resizes, space-to-depth (one operand), concats and splits (along their axis)."""
    before = tensor_shape(op.operands[0].type)
    mixed = []
    if isinstance(op, graph.SliceOp):
        steps = [int(s) for s in op.steps.get_values()]
        mixed = [_normalized(int(a), len(before)) for a, s in zip(op.axes.get_values(), steps) if s < 0]
    if isinstance(op, graph.ConcatOp | graph.SplitOp):
        mixed = [_normalized(op.prop_value("axis"), len(before))]
    carried = broadcast(operands, [_rank(v) for v in op.operands], len(before))
    return [keep_axes(carried, before, tensor_shape(result.type), mixed) for result in op.results]


def _conv(_, op, operands):
    if any(operands[1:]):
        raise Mixes(next(iter(next(c for c in operands[1:] if c).values())), "its weights are bucketed")
    return only_axes(operands[0], {0: 0}, "channel or spatial")


def _pool(_, op, operands):
    channel = 3 if graph.is_channels_last(op.prop_value("layout")) else 1
    return only_axes(operands[0], {0: 0, channel: channel}, "spatial")


def _matmul(_, op, operands):
    rank = _rank(op.results[0])
    lhs_rank, rhs_rank = _rank(op.operands[0]), _rank(op.operands[1])
    if lhs_rank < 2 or rhs_rank < 2:
        return only_axes(operands[0] or operands[1], {}, "contracted")
    lhs = {a: a + rank - lhs_rank for a in range(lhs_rank - 2)} | {lhs_rank - 2: rank - 2}
    rhs = {a: a + rank - rhs_rank for a in range(rhs_rank - 2)} | {rhs_rank - 1: rank - 1}
    result = only_axes(operands[0], lhs, "contracted")
    for axis, symbol in only_axes(operands[1], rhs, "contracted").items():
        _merge(result, axis, symbol)
    return result


def _gemm(_, op, operands):
    a_rows = 1 if op.trans_a is not None else 0
    b_cols = 0 if op.trans_b is not None else 1
    result = only_axes(operands[0], {a_rows: 0}, "contracted")
    for axis, symbol in only_axes(operands[1], {b_cols: 1}, "contracted").items():
        _merge(result, axis, symbol)
    if len(operands) > 2:
        for axis, symbol in broadcast([operands[2]], [_rank(op.operands[2])], 2).items():
            _merge(result, axis, symbol)
    return result


def _normalizing(_, op, operands):
    """Softmax (one axis), layer norm (its axis and every later one)."""
    rank = _rank(op.operands[0])
    axis = _normalized(op.prop_value("axis"), rank)
    if any(operands[1:]):
        raise Mixes(next(iter(next(c for c in operands[1:] if c).values())), "its scale or bias is bucketed")
    normalized = [axis] if isinstance(op, graph.SoftmaxOp) else list(range(axis, rank))
    return only_axes(operands[0], {a: a for a in range(rank) if a not in normalized}, "normalized")


def _reduce(_, op, operands):
    rank = _rank(op.operands[0])
    axes = {_normalized(int(a), rank) for a in op.axes.get_values()}
    keep = op.keepdims is not None
    kept = [a for a in range(rank) if keep or a not in axes]
    return only_axes(operands[0], {a: kept.index(a) for a in kept if a not in axes}, "reduced")


def _cumsum(_, op, operands):
    rank = _rank(op.operands[0])
    if not op.prop_value("reverse"):
        return dict(operands[0])
    axis = _normalized(op.prop_value("axis"), rank)
    return only_axes(operands[0], {a: a for a in range(rank) if a != axis}, "reverse-summed")


def _gather(_, op, operands):
    data_rank, index_rank = _rank(op.operands[0]), _rank(op.operands[1])
    axis = _normalized(op.prop_value("axis"), data_rank)
    data = {a: a for a in range(axis)} | {a: a + index_rank - 1 for a in range(axis + 1, data_rank)}
    result = only_axes(operands[0], data, "gathered")
    for index_axis, symbol in operands[1].items():
        _merge(result, axis + index_axis, symbol)
    return result


def _attention(analysis, op, operands):
    q, k, v, mask = (operands + [{}])[:4]
    result = only_axes(q, {0: 0, 1: 1, 2: 2}, "head (contracted)")
    for axis, symbol in only_axes(k, {0: 0, 1: 1, 2: -1}, "head (contracted)").items():
        if axis == -1:
            analysis.result.padded_keys.append((analysis.attention_index, symbol))
        else:
            _merge(result, axis, symbol)
    for axis, symbol in only_axes(v, {0: 0, 1: 1, 2: -1, 3: 3}, "value").items():
        if axis == -1 and k.get(2) != symbol:
            raise Mixes(symbol, "its values are bucketed along the keys' axis but its keys are not")
        if axis != -1:
            _merge(result, axis, symbol)
    if mask:
        for axis, symbol in broadcast([mask], [_rank(op.operands[3])], 4).items():
            if axis == 3 and k.get(2) != symbol:
                raise Mixes(symbol, "its mask is bucketed along the keys' axis but its keys are not")
            if axis != 3:
                _merge(result, axis, symbol)
    return result


RULES = {
    graph.BatchNormOp: _batch_norm,
    graph.ReshapeOp: _reshape, graph.FlattenOp: _reshape, graph.SqueezeOp: _reshape, graph.UnsqueezeOp: _reshape,
    graph.TransposeOp: _transpose,
    graph.ExpandOp: _elementwise, graph.CastOp: _elementwise, graph.SumOp: _elementwise, graph.WhereOp: _elementwise,
    graph.SliceOp: _same_extent, graph.PadOp: _same_extent, graph.ResizeOp: _same_extent,
    graph.SpaceToDepthOp: _same_extent, graph.ConcatOp: _same_extent, graph.SplitOp: _same_extent,
    graph.Conv2dOp: _conv, graph.ConvTranspose2dOp: _conv,
    graph.MaxPool2dOp: _pool, graph.AvgPool2dOp: _pool, graph.GlobalAvgPoolOp: _pool,
    graph.MatMulOp: _matmul, graph.GemmOp: _gemm,
    graph.SoftmaxOp: _normalizing, graph.LayerNormOp: _normalizing, graph.CumSumOp: _cumsum,
    graph.GatherOp: _gather,
    graph.AttentionOp: _attention,
}
BASE_RULES = ((graph.UnaryOp, _elementwise), (graph.BinaryOp, _elementwise), (graph.ReduceOp, _reduce))


def bucket_axes(module: ModuleOp, inputs: Mapping[int, Carried], symbol_names: Sequence[str]) -> BucketAxes:
    """Follows the bucketed axes of @main's arguments (`inputs`: argument index -> {axis:
    symbol}) to its outputs; one BoltError naming the first op that mixes positions along
    one. `symbol_names` name the symbols in that error."""
    return _Analysis(module, inputs).run(symbol_names)
