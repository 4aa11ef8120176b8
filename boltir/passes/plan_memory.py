"""plan-memory: every intermediate tensor of `@main` gets a byte offset in one arena.

The host program is a list of kernel launches on buffers. Rather than one allocation per
tensor, the runtime allocates one device arena and each value lives at a fixed offset in
it; values whose lifetimes do not intersect share bytes.

Requires: a module with a function `@main` of one block, every tensor in it statically
shaped (else a BoltError naming the value); normally the output of the op-level pipeline,
`select-kernels` and `lower-op-to-cutlass` (op.* and cutlass.* ops, op.constant weights),
but any op with tensor results is planned the same way.

What is planned: every tensor result of a top-level op of `@main` except `op.constant`
(weights live in their own image) -- so also the values `@main` returns: they sit in the
arena like the others and the runtime copies them out after the last launch. Function
arguments are the caller's memory and get no offset. Nested regions (an `op.elementwise`
body) hold scalars and are not planned.

Liveness, in program order: a value is live from its defining op to its last use (a use
inside a nested region counts as a use by the top-level op that holds it; `func.return`
is a use). A value nobody reads is live at its defining op only. Two buffers may share
bytes only if their live ranges are disjoint, so an op's inputs and outputs never overlap
except where reuse below says so.

Reuse in place (a buffer is a group of values sharing one offset; its live range is the
union of theirs):
- `op.reshape` does not move data: its result joins its input's buffer (same offset, no
  copy), extending the buffer's live range. A reshape of an argument or a constant has
  no arena buffer to join: it gets its own, and the runtime copies. So a reshape whose
  result offset equals its input's offset is free.
- an elementwise op (`op.elementwise`, `op.unary`, `op.binary`, `op.select`, `op.cast`)
  writes into the buffer of its first input that has the output's shape (no broadcast)
  and element size, and whose buffer nobody reads after this op (no later use of the
  value or of any reshape alias of it; arguments, constants and returned values are
  therefore never overwritten). The kernel running the op must tolerate its output
  aliasing that input: boltir's elementwise kernel does, each thread reading its
  elements of every input before writing the same elements of the output (another
  operand reading the same buffer, as in `x * x` or `x + reshape(x)`, reads those same
  elements too).

Allocation: sizes are numel x element size (numpy's itemsize: sub-byte types take a
byte) rounded up to 256 bytes, so every offset is 256-byte aligned. Buffers are placed
one at a time, each into a gap between the already-placed buffers whose live ranges
intersect its own, else above the highest of them (Pisarchyk & Lee 2020, as in TFLite):
greedy by size (largest first) with the smallest gap that fits, the same with the lowest
gap that fits, and greedy by breadth (the buffers of the op with the most live bytes
first). The smallest of the three arenas is kept; the first on a tie. It is quadratic in
the number of buffers.

Guarantees:
- each planned op gets `memory = array<i64: ...>`, the offset of each of its results (a
  discardable attribute; `op.constant` and `func.return` get none);
- `@main` gets the discardable attribute `arena_bytes = N : i64`, the arena's size: the
  highest offset + aligned size (0 with nothing to plan);
- no two buffers live at the same time overlap; every offset is a multiple of 256;
- the module computes the same function (the interpreter ignores the attributes); a
  second run replans from scratch and writes the same attributes.

Not planned: kernels' own workspaces (split-k, CUTLASS semaphores), which the host
program allocates apart; in-place epilogues (a conv writing over its residual).

--pass-stats: "peak arena bytes" (arena_bytes), "bytes if every buffer were separate"
(the sum of every planned value's aligned size: no reuse at all), "buffers" (planned
values), "in-place reuses" (elementwise ops writing over an input), "reshape aliases".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from boltir.diagnostics import BoltError, format_location
from boltir.dialects import op as ops
from boltir.dialects.graph import i64_array, i64_attr, tensor_shape
from boltir.dtypes import numpy_dtype
from boltir.passes import statistics

ALIGNMENT = 256
"""Every offset and every buffer size is a multiple of this many bytes (cudaMalloc's)."""
MEMORY_ATTR = "memory"
ARENA_ATTR = "arena_bytes"
ENTRY = "main"

IN_PLACE_OPS = (ops.ElementwiseOp, ops.UnaryOp, ops.BinaryOp, ops.SelectOp, ops.CastOp)
"""Ops that may write their result over an input's buffer."""


# ----------------------------------------------------------------------------- helpers


def align(size: int) -> int:
    return -(-size // ALIGNMENT) * ALIGNMENT


def element_size(value: SSAValue) -> int:
    return numpy_dtype(value.type.element_type).itemsize


def byte_size(value: SSAValue) -> int:
    """numel x element size, unaligned."""
    return int(np.prod(tensor_shape(value.type), dtype=np.int64)) * element_size(value)


def entry_function(module: ModuleOp) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == ENTRY:
            if op.is_declaration:
                raise BoltError(f"plan-memory needs a body for @{ENTRY}; it is only declared", format_location(op.location))
            if len(op.body.blocks) != 1:
                raise BoltError(f"plan-memory needs @{ENTRY} as one block, got {len(op.body.blocks)}", format_location(op.location))
            return op
    raise BoltError(f"plan-memory needs a function @{ENTRY} (the model's host program); the module has none")


def check_static(entry: func.FuncOp) -> None:
    """Every tensor of `@main` has a static shape; every planned result is a tensor."""
    for index, arg in enumerate(entry.body.block.args):
        if isinstance(arg.type, TensorType) and not arg.type.has_static_shape():
            name = f" (%{arg.name_hint})" if arg.name_hint else ""
            raise BoltError(
                f"plan-memory needs static shapes: argument {index}{name} of @{ENTRY} has type {arg.type}",
                format_location(entry.location),
            )
    for op in entry.body.block.ops:
        for index, result in enumerate(op.results):
            if not isinstance(result.type, TensorType):
                raise BoltError(f"plan-memory plans tensors: result {index} of {op.name} has type {result.type}", format_location(op.location))
            if not result.type.has_static_shape():
                raise BoltError(
                    f"plan-memory needs static shapes: result {index} of {op.name} has type {result.type}", format_location(op.location)
                )


def top_level(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that holds `op` (itself, or the op whose region holds it); None
    for an op outside `block`, such as a detached op a pass built and dropped without
    erasing, whose stale use must not keep a value alive."""
    while op is not None and op.parent_block() is not block:
        op = op.parent_op()
    return op


# ------------------------------------------------------------------------------ buffers


@dataclass(eq=False)
class Buffer:
    """Values sharing one offset: a value, its reshape aliases and in-place results."""

    values: list[SSAValue]
    size: int
    """Aligned bytes."""
    start: int
    end: int
    """First and last op (program order, inclusive) at which the buffer is live."""
    offset: int = -1

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(eq=False)
class MemoryPlan:
    buffers: list[Buffer] = field(default_factory=list)
    buffer_of: dict[SSAValue, Buffer] = field(default_factory=dict)
    in_place: int = 0
    reshape_aliases: int = 0

    @property
    def arena_bytes(self) -> int:
        return max((b.offset + b.size for b in self.buffers), default=0)

    @property
    def separate_bytes(self) -> int:
        """The arena if every planned value had its own bytes."""
        return sum(align(byte_size(v)) for v in self.buffer_of)

    def offset(self, value: SSAValue) -> int:
        return self.buffer_of[value].offset


def last_uses(block: Block) -> dict[SSAValue, int]:
    """Each result's last use (op index in `block`), its defining op's if unused."""
    index = {op: i for i, op in enumerate(block.ops)}
    last: dict[SSAValue, int] = {}
    for i, op in enumerate(block.ops):
        for result in op.results:
            users = (top_level(use.operation, block) for use in result.uses)
            last[result] = max((index[user] for user in users if user is not None), default=i)
    return last


def in_place_target(op: Operation, plan: MemoryPlan, index: int) -> Buffer | None:
    """The buffer of an input this elementwise op may overwrite, if any."""
    (out,) = op.results
    for value in op.operands:
        buffer = plan.buffer_of.get(value)
        if (
            buffer is not None
            and buffer.end == index  # nobody reads this buffer after the op
            and tensor_shape(value.type) == tensor_shape(out.type)
            and element_size(value) == element_size(out)
        ):
            return buffer
    return None


def build_buffers(block: Block) -> MemoryPlan:
    """Groups the planned values into buffers with their live ranges."""
    plan = MemoryPlan()
    last = last_uses(block)

    def join(buffer: Buffer, value: SSAValue) -> None:
        buffer.values.append(value)
        buffer.end = max(buffer.end, last[value])
        plan.buffer_of[value] = buffer

    for index, op in enumerate(block.ops):
        if isinstance(op, ops.ConstantOp) or not op.results:
            continue
        if isinstance(op, ops.ReshapeOp) and op.input in plan.buffer_of:
            join(plan.buffer_of[op.input], op.output)
            plan.reshape_aliases += 1
            continue
        if isinstance(op, IN_PLACE_OPS) and (target := in_place_target(op, plan, index)) is not None:
            join(target, op.results[0])
            plan.in_place += 1
            continue
        for result in op.results:
            buffer = Buffer([result], align(byte_size(result)), index, last[result])
            plan.buffers.append(buffer)
            plan.buffer_of[result] = buffer
    return plan


def fit_offsets(buffers: list[Buffer], order: list[int], best_fit: bool) -> list[int]:
    """Places `buffers[i]` for i in `order`, each into a gap between the placed buffers
    whose live ranges intersect its own (the smallest gap that holds it with `best_fit`,
    else the lowest), or above them all. Returns the offsets, by buffer index."""
    offsets = [0] * len(buffers)
    placed: list[int] = []
    for i in order:
        buffer = buffers[i]
        if buffer.size == 0:
            continue
        live = sorted((j for j in placed if buffers[j].overlaps_in_time(buffer)), key=lambda j: offsets[j])
        best, best_gap, top = None, None, 0
        for j in live:
            gap = offsets[j] - top
            if gap >= buffer.size and (best_gap is None or (best_fit and gap < best_gap)):
                best, best_gap = top, gap
            top = max(top, offsets[j] + buffers[j].size)
        offsets[i] = top if best is None else best
        placed.append(i)
    return offsets


def by_size(buffers: list[Buffer]) -> list[int]:
    """Largest first; ties: the earlier first."""
    return sorted(range(len(buffers)), key=lambda i: (-buffers[i].size, buffers[i].start, i))


def by_breadth(buffers: list[Buffer]) -> list[int]:
    """The buffers live at the op where the most bytes are live first (largest first),
    then those of the next busiest op, and so on (greedy by breadth)."""
    steps = max((b.end for b in buffers), default=-1) + 1
    breadth = [0] * steps
    live_at: list[list[int]] = [[] for _ in range(steps)]
    for i, buffer in enumerate(buffers):
        for index in range(buffer.start, buffer.end + 1):
            breadth[index] += buffer.size
            live_at[index].append(i)
    order: list[int] = []
    seen: set[int] = set()
    for index in sorted(range(steps), key=lambda k: (-breadth[k], k)):
        for i in sorted(live_at[index], key=lambda i: (-buffers[i].size, buffers[i].start, i)):
            if i not in seen:
                seen.add(i)
                order.append(i)
    return order


STRATEGIES = (("size", by_size, True), ("size", by_size, False), ("breadth", by_breadth, True))
"""(name, order, best fit): the placements tried; the smallest arena wins, the first on a tie."""


def place(buffers: list[Buffer]) -> None:
    """Sets every buffer's offset: the best of `STRATEGIES`."""
    best: list[int] | None = None
    best_arena = 0
    for _, order, best_fit in STRATEGIES:
        offsets = fit_offsets(buffers, order(buffers), best_fit)
        arena = max((offset + b.size for offset, b in zip(offsets, buffers, strict=True)), default=0)
        if best is None or arena < best_arena:
            best, best_arena = offsets, arena
    for buffer, offset in zip(buffers, best or [], strict=True):
        buffer.offset = offset


def plan_memory(entry: func.FuncOp) -> MemoryPlan:
    """The plan of `@main` (checked for static shapes), without touching the IR."""
    check_static(entry)
    plan = build_buffers(entry.body.block)
    place(plan.buffers)
    return plan


# --------------------------------------------------------------------------------- pass


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Requires: `@main`, statically shaped. Guarantees: every non-constant result of
    `@main` has a 256-byte-aligned arena offset (`memory`), buffers live at the same time
    never overlap, `@main` has `arena_bytes`; reshapes alias, dead inputs of elementwise
    ops are overwritten in place; same function."""

    name = "plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        entry = entry_function(op)
        plan = plan_memory(entry)
        for target in entry.body.block.ops:
            if target.results and not isinstance(target, ops.ConstantOp):
                target.attributes[MEMORY_ATTR] = i64_array([plan.offset(r) for r in target.results])
        entry.attributes[ARENA_ATTR] = i64_attr(plan.arena_bytes)
        statistics.count(self, "peak arena bytes", plan.arena_bytes)
        statistics.count(self, "bytes if every buffer were separate", plan.separate_bytes)
        statistics.count(self, "buffers", len(plan.buffer_of))
        statistics.count(self, "in-place reuses", plan.in_place)
        statistics.count(self, "reshape aliases", plan.reshape_aliases)

