"""Views: where each element of a data-movement chain's result sits in the tensor the
chain starts from.

A `View` maps an index of its shape to an element offset in a row-major base tensor.
Each axis is a row-major list of factors (size, stride): the axis index, written in
those sizes' mixed radix, contributes `digit * stride` per factor, and the view adds its
`offset`. An axis of one factor is an ordinary strided axis; several factors appear
where a reshape merges axes that are not laid out one after the other (torch.onnx's
[S, B, E] -> [S, B·H, D] of one third of a packed projection), which an ordinary
strided view cannot say but a later reshape or transpose may undo. Reshapes,
transposes, gathers of a constant scalar and slices of a view are views again; a
reshape answers None only where it splits a factor at a size that does not divide it.

Two views of one shape are the same map when their offsets and their normalized factors
agree (size-1 factors dropped, factors laid out one after the other merged). The
analysis works on the shapes alone, so its cost does not grow with the tensors (an
iota through the interpreter would move every element of a ViT-B's packed projection,
per chain).

Not a pass: fold-attention-layouts reads chains with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Operation

from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape
from boltir.passes.common import constant_of

Shape = tuple[int, ...]
Factor = tuple[int, int]
"""(size, stride)"""
Axis = tuple[Factor, ...]


def row_major_strides(shape: Sequence[int]) -> Shape:
    strides, running = [], 1
    for extent in reversed(shape):
        strides.append(running)
        running *= extent
    return tuple(reversed(strides))


def normalized(axis: Axis) -> Axis:
    """The factors without those of size 1, neighbours laid out one after the other merged."""
    merged: list[Factor] = []
    for size, stride in axis:
        if size == 1:
            continue
        if merged and merged[-1][1] == stride * size:
            merged[-1] = (merged[-1][0] * size, stride)
        else:
            merged.append((size, stride))
    return tuple(merged)


@dataclass(frozen=True)
class View:
    axes: tuple[Axis, ...]
    offset: int = 0

    @staticmethod
    def contiguous(shape: Sequence[int]) -> View:
        return View(tuple(((n, s),) for n, s in zip(shape, row_major_strides(shape), strict=True)))

    @property
    def shape(self) -> Shape:
        return tuple(math.prod(size for size, _ in axis) for axis in self.axes)

    def permute(self, perm: Sequence[int]) -> View:
        return View(tuple(self.axes[p] for p in perm), self.offset)

    def select(self, axis: int, index: int) -> View:
        """The view at `index` along `axis`, the axis dropped (a gather of a scalar)."""
        offset = self.offset
        for size, stride in reversed(self.axes[axis]):
            index, digit = divmod(index, size)
            offset += digit * stride
        return View(self.axes[:axis] + self.axes[axis + 1 :], offset)

    def slice(self, axis: int, start: int, step: int, size: int) -> View | None:
        factors = normalized(self.axes[axis])
        if not factors:  # an axis of size 1
            return self if size == 1 or start == 0 else None
        if len(factors) != 1:
            return None
        stride = factors[0][1]
        axes = self.axes[:axis] + (((size, stride * step),),) + self.axes[axis + 1 :]
        return View(axes, self.offset + start * stride)

    def reshape(self, shape: Sequence[int]) -> View | None:
        """The same elements in row-major order with another shape, or None where a factor
        would have to be split at a size that does not divide it."""
        if math.prod(shape) != math.prod(self.shape):
            return None
        if math.prod(shape) == 0:
            return View(View.contiguous(shape).axes, self.offset)
        factors = list(normalized(tuple(factor for axis in self.axes for factor in axis)))
        axes, k = [], 0
        for extent in shape:
            need, group = extent, []
            while need > 1:
                size, stride = factors[k]
                if size <= need:
                    if need % size:
                        return None
                    group.append((size, stride))
                    need, k = need // size, k + 1
                else:
                    if size % need:
                        return None
                    group.append((need, stride * (size // need)))
                    factors[k], need = (size // need, stride), 1
            axes.append(tuple(group))
        return View(tuple(axes), self.offset)

    def same_as(self, other: View | None) -> bool:
        if other is None or self.shape != other.shape:
            return False
        if math.prod(self.shape) == 0:
            return True
        return self.offset == other.offset and all(
            normalized(a) == normalized(b) for a, b in zip(self.axes, other.axes, strict=True)
        )


VIEW_OPS = (ops.ReshapeOp, ops.LayoutTransformOp, ops.GatherOp, ops.SliceOp)
"""The data-movement ops a view can pass through (a gather only of a constant scalar)."""


def is_view_op(op: Operation | None) -> bool:
    if isinstance(op, ops.GatherOp):
        indices = constant_of(op.indices)
        return indices is not None and indices.size == 1
    return isinstance(op, VIEW_OPS)


def apply_op(view: View, op: Operation) -> View | None:
    """`view` after one data-movement op (whose input `view` describes), or None."""
    if isinstance(op, ops.ReshapeOp):
        return view.reshape(tensor_shape(op.output.type))
    if isinstance(op, ops.LayoutTransformOp):
        return view.permute(op.prop_value("perm"))
    if isinstance(op, ops.GatherOp):
        indices = constant_of(op.indices)
        axis = op.prop_value("axis") % len(view.axes)
        picked = view.select(axis, int(indices.reshape(())) % view.shape[axis])
        ones = ((),) * indices.ndim  # a [1]-shaped index keeps an axis of size 1
        return View(picked.axes[:axis] + ones + picked.axes[axis:], picked.offset)
    if isinstance(op, ops.SliceOp):
        return apply_slice(view, op)
    return None


def apply_slice(view: View, op: ops.SliceOp) -> View | None:
    rank = len(view.axes)
    out = tensor_shape(op.output.type)
    for start, end, axis, step in zip(*(op.prop_value(n) for n in ("starts", "ends", "axes", "steps")), strict=True):
        axis %= rank
        picked = range(*slice(start, end, step).indices(view.shape[axis])) if view is not None else range(0)
        if view is None or len(picked) != out[axis]:
            return None
        view = view.slice(axis, picked.start, step, len(picked))
    return view


def view_of_chain(source_shape: Sequence[int], chain: Sequence[Operation]) -> View | None:
    """The view of the last op's result over a row-major tensor of `source_shape` that
    the first op reads, or None where a step is no view."""
    view: View | None = View.contiguous(source_shape)
    for op in chain:
        view = apply_op(view, op)
        if view is None:
            return None
    return view
